/**
 * A small vault as Obsidian's metadata cache would see it: path -> frontmatter
 * (null: a note without frontmatter). Shared by the panel tests, the bundle
 * smoke test and the screenshot tool (tools/render-panel.ts).
 */

export const WEBAPP = "github.com/example/webapp";
export const MOBILE = "github.com/example/mobile";

export const SAMPLE_FILES: Record<string, Record<string, unknown> | null> = {
	"profile/who-i-work-with.md": {
		id: "m-01profile0000000000000000a", title: "Who I work with", type: "core-profile", scope: "global",
		authority: "explicit", trust: "learned", lifecycle: "proven", recall: "passive", tier: "hot", importance: 0.9,
		summary: "A backend engineer working in Python and TypeScript.",
	},
	"memories/global/keep-answers-short.md": {
		id: "m-01keepshort00000000000000b", title: "Keep answers short", type: "collaboration-policy",
		authority: "explicit", trust: "learned", lifecycle: "proven", recall: "passive", tier: "hot",
		summary: "Answer in a few sentences with the code first.",
	},
	"memories/global/run-the-tests-before-proposing-a-commit.md": {
		id: "m-01runtests000000000000000c", title: "Run the tests before proposing a commit",
		type: "collaboration-policy", authority: "explicit", trust: "learned", lifecycle: "proven", recall: "active",
		tier: "cold", summary: "Run the test command and report the result first.",
		applied: { "used-successfully": 3, ignored: 1 },
	},
	"memories/global/review-checklist.md": {
		id: "m-01review00000000000000000d", title: "Review checklist", type: "procedure", authority: "explicit",
		trust: "learned", lifecycle: "proven", tier: "cold",
		summary: "Read the tests first; check one-line error messages.",
	},
	"memories/global/prefers-tabs-in-makefiles.md": {
		id: "m-01tabs000000000000000000e", title: "Prefers tabs in Makefiles", type: "fact", authority: "inferred",
		trust: "learned", lifecycle: "trial", tier: "cold", summary: "Makefiles in the user's projects indent with tabs.",
	},
	"memories/global/vendor-api-rate-limits.md": {
		id: "m-01vendor00000000000000000f", title: "Vendor API rate limits", type: "document", trust: "external",
		lifecycle: "proven", tier: "cold", summary: "The vendor's API allows 100 requests a minute per key.",
	},
	"memories/projects/github.com-example-webapp/use-pytest-fixtures-not-setup.md": {
		id: "m-01pytest00000000000000000g", title: "Use pytest fixtures, not setUp", type: "collaboration-policy",
		scope: "project", project: WEBAPP, paths: ["tests/**"], authority: "explicit", trust: "learned",
		lifecycle: "proven", recall: "active", tier: "cold",
		summary: "Tests in this repository use pytest fixtures from tests/conftest.py.",
	},
	"memories/projects/github.com-example-webapp/staging-runs-on-postgres-16.md": {
		id: "m-01postgres16000000000000h", title: "Staging runs on Postgres 16", type: "fact", scope: "project",
		project: WEBAPP, authority: "explicit", trust: "system", lifecycle: "proven", tier: "cold",
		summary: "The staging environment runs Postgres 16 with pgvector.",
	},
	"memories/projects/github.com-example-webapp/staging-runs-on-postgres-14.md": {
		id: "m-01postgres14000000000000i", title: "Staging runs on Postgres 14", type: "fact", scope: "project",
		project: WEBAPP, authority: "explicit", trust: "learned", lifecycle: "superseded", tier: "cold",
		superseded_by: "m-01postgres16000000000000h", summary: "The staging environment runs Postgres 14.",
	},
	"memories/projects/github.com-example-webapp/INDEX.md": null,
	"episodes/projects/github.com-example-webapp/flaky-login-test-on-ci.md": {
		id: "m-01flaky000000000000000000j", title: "Flaky login test on CI", type: "episode", scope: "project",
		project: WEBAPP, authority: "inferred", trust: "learned", lifecycle: "trial", tier: "cold",
		summary: "test_lockout failed twice: it read the wall clock.",
		applied: { corrected: 1 },
	},
	"memories/projects/github.com-example-mobile/the-mobile-app-uses-expo.md": {
		id: "m-01expo0000000000000000000k", title: "The mobile app uses Expo", type: "fact", scope: "project",
		project: MOBILE, authority: "explicit", trust: "learned", lifecycle: "proven", tier: "cold",
		summary: "React Native on Expo SDK 51; builds run on EAS.",
	},
	"trash/nightly-builds-publish-at-02-00.md": {
		id: "m-01nightly0000000000000000l", title: "Nightly builds publish at 02:00", type: "fact",
		trashed_at: "2026-11-30T10:00:00Z",
	},
	"notes/meeting.md": null,
	"notes/tagged.md": { title: "A note with frontmatter but no memvault id", type: "note" },
};
