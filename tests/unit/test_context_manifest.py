"""The manifest's text within its budget: as many entries as fit, the best ranked written richest."""

from __future__ import annotations

import re

import pytest

from vault_engine.context.manifest import (
    BRIEF_TITLE,
    POLICY_LEAD,
    Manifest,
    ManifestItem,
    ResidentItem,
    fit,
)

STEPS = (320, 160, 80, 32, 0)
ENTRY = re.compile(r"^- `(m-[0-9a-z]+)` (.*) _\(why: (.+)\)_$")


def hits(count: int) -> list[ManifestItem]:
    """Search hits of the task text, best first: each title longer than a brief one, each source long."""
    return [ManifestItem(f"m-01hit{n:020d}", f"Search hit number {n} about the payment webhook retries",
                         "", ["global", "user explicit setting", f"relevant to the task text (rank {n})"],
                         f"The payment webhook {n} retries three times with exponential backoff. " * 6,
                         [f"relevant #{n}"], standing=False)
            for n in range(1, count + 1)]


def fitted(budget: int, items: list[ManifestItem], resident: list[ResidentItem] | None = None) -> Manifest:
    manifest = Manifest("fix the payment webhook retries", "github.com/acme/api", budget, resident or [], items,
                        application="e-01aaaaaaaaaaaaaaaaaaaaaaaa")
    fit(manifest, STEPS)
    return manifest


def entry_lines(manifest: Manifest) -> list[re.Match[str]]:
    found = [ENTRY.match(line) for line in manifest.markdown.splitlines() if line.startswith("- `")]
    assert all(found), manifest.markdown
    return [m for m in found if m is not None]


def test_more_budget_lists_more_memories_until_the_candidates_run_out() -> None:
    listed = []
    for budget in range(1000, 40001, 1000):
        manifest = fitted(budget, hits(80))
        assert len(manifest.markdown) <= budget
        assert [m.id for m in manifest.manifest] == [f"m-01hit{n:020d}" for n in range(1, len(manifest.manifest) + 1)]
        assert len(manifest.manifest) + manifest.omitted == 80
        listed.append(len(manifest.manifest))
    assert listed == sorted(listed) and listed[0] < listed[5] < 80 and listed[-1] == 80
    # A 6,000-character manifest lists several times what one entry per 300 characters would.
    assert fitted(6000, hits(80)).manifest.__len__() >= 50


@pytest.mark.parametrize("budget", [2000, 6000, 9000, 12000, 20000, 40000])
def test_every_entry_says_why_it_applies_and_lines_grow_shorter_down_the_list(budget: int) -> None:
    manifest = fitted(budget, hits(80))
    lines = entry_lines(manifest)
    assert [m.group(1) for m in lines] == [item.id for item in manifest.manifest]
    for match in lines:
        assert match.group(3).strip(), match.group(0)  # a reason on every line
        assert "relevant" in match.group(3)
    # Richness never grows down the list: a bold title, then the abstract's step, then the whole title.
    richness = [(m.group(2).startswith("**"), min(s for s in STEPS if s >= len(item.abstract)),
                 item.title in m.group(2)) for m, item in zip(lines, manifest.manifest, strict=True)]
    assert richness == sorted(richness, reverse=True)


def test_a_roomy_budget_writes_every_entry_in_full() -> None:
    manifest = fitted(100_000, hits(5))
    for match, item in zip(entry_lines(manifest), manifest.manifest, strict=True):
        assert match.group(2).startswith(f"**{item.title}**: ")
        assert len(item.abstract) > 160
        assert match.group(3) == "; ".join(item.why)


def test_a_tight_budget_lists_brief_entries_before_dropping_any() -> None:
    manifest = fitted(1500, hits(10))
    assert manifest.omitted == 0 and len(manifest.manifest) == 10
    last = entry_lines(manifest)[-1]
    assert not last.group(2).startswith("**") and len(last.group(2)) <= BRIEF_TITLE
    assert last.group(3) == "relevant #10"  # the short reason: neither the scope nor the authority


def test_search_hits_do_not_push_a_matching_policy_out_of_the_resident_part() -> None:
    policy = ResidentItem("m-01policy00000000000000000", "Retry policy", "Retries back off exponentially. " * 20,
                          [POLICY_LEAD, "global"])
    manifest = fitted(4000, hits(80), [policy])
    assert [r.id for r in manifest.resident] == [policy.id]
    assert 0 < len(manifest.manifest) < 80 and len(manifest.markdown) <= 4000
    # An entry that applies on its own (standing) is listed before the policy keeps its full text.
    standing = [ManifestItem(f"m-01std{n:020d}", f"Standing note {n}", "", ["global", "task webhook matches"],
                             "A standing note. " * 10, ["task webhook matches"]) for n in range(40)]
    tight = fitted(2600, standing, [policy])
    assert tight.resident == [] and tight.manifest[0].id == policy.id
    assert len(tight.markdown) <= 2600
