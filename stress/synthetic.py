"""Deterministic synthetic memories for the benchmarks and the crash harness.

Records read like the notes an agent keeps: English-like prose built from
sentence templates over ~2,000 common English words and technical terms, each
memory about one of a few hundred topics (so related memories share words and
queries have answers), a mix of types, ~20% with a trigger, ~70% in one of 20
projects, and a few rare exact tokens (``E4821``, ``ERR_CONN_RESET``).

Record ``i`` of seed ``s`` is always the same (its own seeded RNG), so a
benchmark can rebuild any record, or a query about it, without a vault.

    from stress.synthetic import Generator, write_vault
    gen = Generator(seed=7)
    lines = [json.dumps(m.record) for m in gen.memories(1000)]
    write_vault(Vault(root), gen, 10_000)
"""

from __future__ import annotations

import itertools
import json
import random
import re
import time
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vault_engine.retrieval.restatements import plural

if TYPE_CHECKING:
    from vault_engine.index.embedder import Embedder
    from vault_engine.vault import Vault

GENERATOR_VERSION = "1"  # bump when the records change, so cached vaults are rebuilt

# Roughly most common first within each list: words are drawn Zipf-like by rank.
NOUNS = """
time year people way day thing life world school state family group country problem hand part place case week
company system program question work number night point home water room area money story fact month lot right
study book job word business issue side kind head house service friend power hour game line end member law car
city community name team minute idea body information back parent face level office door health person art
history party result change morning reason research moment air teacher force education policy process music
market sense plan interest experience effect use class control care field development role effort rate heart
show leader light voice mind price report decision view relationship town road difference value building action
model season society tax director position player record paper space ground form event matter center site
project activity table need situation cost industry figure street image phone data picture practice piece land
product test movie support technology step computer type attention source organization truth economy memory rule
note list file folder path page version release build branch commit request response error warning failure bug
fix patch feature option setting flag default key token index cache queue worker thread task schedule deadline
meeting review comment feedback answer owner user customer client account password session login permission
channel message email notification alert incident outage latency throughput load traffic capacity limit budget
quota invoice payment order cart discount dashboard chart metric log trace span signal sample benchmark suite
fixture mock stub assertion coverage format style guide template draft document section paragraph sentence title
summary heading row column schema migration database query transaction lock connection pool driver server host
node cluster region zone network port address domain certificate secret backup snapshot archive storage disk
volume bucket object stream pipe buffer batch chunk window slice segment shard replica follower checkpoint
machine handler callback hook plugin extension module package library framework tool script command argument
variable function method interface protocol contract agreement account habit preference convention standard
language library sprint milestone roadmap goal estimate ticket backlog priority label owner reviewer approval
handoff standup retrospective demo prototype experiment hypothesis metric baseline target threshold spike drop
regression rollback rollout deploy pipeline stage job runner artifact image container registry manifest chart
secret variable environment staging production sandbox laptop desktop terminal shell editor browser tab cookie
header body payload field parameter filter sort page cursor offset limit range boundary edge corner gap margin
width height size length depth weight speed distance temperature pressure signal noise pattern shape color font
icon button menu panel dialog modal form input label link tooltip screen layout grid card list tree graph node
edge vertex path route map region country language currency timezone calendar date clock timer counter gauge
histogram percentile average median total sum ratio share percent fraction unit dollar cent hour minute second
office desk chair kitchen coffee lunch dinner weekend holiday vacation travel flight hotel train ticket bag
letter package delivery address phone call voice video camera microphone speaker screen keyboard mouse monitor
battery charger cable adapter printer scanner router modem switch rack fan power supply room floor building
parking garden street bridge river lake mountain forest field farm animal dog cat bird fish horse tree flower
grass rain snow wind storm sun moon star sky cloud weather summer winter spring autumn morning evening night
friend neighbor partner manager engineer designer writer analyst lawyer doctor nurse student teacher parent
child baby brother sister mother father uncle cousin guest visitor stranger expert beginner author editor
contractor vendor supplier customer buyer seller agent assistant colleague mentor intern candidate recruiter
interview offer contract salary bonus benefit insurance tax refund receipt bill rent loan mortgage account
balance deposit transfer fee charge credit debt budget plan forecast quarter year month week morning afternoon
ability access accident account achievement advantage advice agency amount analysis animal apartment approach
argument army article aspect assignment association assumption atmosphere audience authority average award
balance band bank base basis bed behavior belief bill bit blood board boat bottom box brain brand bread
breakfast budget camera campaign capital career category cell chain challenge champion chance chapter
character charge chest chicken choice church circle citizen claim climate coach coast code collection college
combination comfort commission committee communication comparison competition complaint concept concern
condition conference confidence conflict connection consequence construction consumer context contribution
conversation copy corner council county course cover crash credit crew crime crisis criteria culture cup
currency curve cycle damage danger deal debate decade definition degree delay demand department description
design desire detail device diet direction disaster discussion disease distribution district division
driver editor effect election element emergency emotion employee employer energy engine entrance entry
environment equipment estate evening examination example exchange exercise exhibition existence expansion
expense explanation expression extent failure farmer fashion fear fee festival film finance finger fire
flow focus food football foundation frame freedom fuel function fund future garage gate gift glass
government grade grant growth guard guest guidance hall hat highway hole horse hospital household housing
husband identity illness impact improvement income independence indication individual infrastructure
initiative injury insight inspection instance instruction insurance intention introduction investment island
item journey judge judgment kitchen knowledge lack language lawyer layer leadership lecture leg lesson
library lift literature location loss luck magazine maintenance management manufacturer marriage material
meal meaning measure media medicine membership mess method mission mistake mixture mode mood motion mountain
negotiation newspaper objective obligation occasion operation opinion opportunity opposition orange outcome
output owner pain painting pair panel passenger pattern peak penalty pension perception performance period
perspective phase philosophy phrase physics pitch platform pleasure pocket poem poet population portion
possibility post potential poverty preparation presence presentation pressure principle priority procedure
profession profit progress property proportion proposal protection psychology purchase purpose quality
quantity radio reaction reading reality recipe recognition recommendation reduction reflection regulation
reputation requirement resolution resource responsibility restaurant revenue revolution reward risk river
routine salt scale scene science scope screen search secretary security selection sequence series session
shape shift shop signature skill software solution song speech spirit sport staff statement status stock
strategy strength structure style subject success suggestion surface survey symbol talent target teaching
technique temperature tension territory theme theory thought threat tone topic tour trade tradition training
transition transport trend trial trip trouble union unit university usage vehicle version victim vision visit
volume warning wealth weapon website welfare wheel winner wisdom witness worry writing yard youth
""".split()

VERBS = """
be have do say get make go know take see come think look want give use find tell ask work seem feel try leave
call keep let begin help show hear play run move like live believe hold bring write provide sit stand lose pay
meet include continue set learn change lead understand watch follow stop create speak read allow add spend grow
open walk win offer remember consider appear buy wait serve send expect build stay fall cut reach kill remain
suggest raise pass sell require report decide pull return explain hope develop carry break receive agree support
hit produce eat cover catch draw choose cause point listen realize place close involve increase prepare handle
check fix test deploy merge review rebase revert restart retry reload refresh rebuild reindex migrate upgrade
downgrade install configure enable disable rotate renew revoke grant deny approve reject assign schedule cancel
pause resume archive restore backup delete remove rename copy paste export import parse validate sanitize
escape encode decode compress encrypt decrypt hash sign verify authenticate authorize cache invalidate evict
flush sync index search rank filter sort group count measure profile optimize tune limit throttle batch split
join combine compare inspect trace log monitor alert notify page escalate triage investigate debug reproduce
document describe summarize record note tag label track estimate plan prioritize announce share publish release
ship launch pin unpin bump freeze lock unlock mount unmount start stop kill spawn fork clone pull push fetch
commit stash squash tag branch ping poll stream subscribe unsubscribe retry queue dequeue drain scale shrink
grow provision destroy seed load dump snapshot replay rollback promote demote elect watch debounce wrap unwrap
patch annotate format lint compile bundle minify transpile render print display hide collapse expand resize
drag drop click type scroll select highlight clean wash cook order book visit travel drive ride fly walk call
email text message remind mention discuss argue agree decide vote elect hire fire train teach coach guide
mentor ask answer thank apologize invite accept decline promise warn forget forgive avoid prefer enjoy hate
love miss notice ignore respect trust doubt guess wonder imagine assume prove confirm deny claim admit explain
accept achieve acquire adapt adjust admire adopt advise afford aim alter analyze anticipate apply appreciate
arrange arrive assess assist attach attempt attend attract balance bear beat become behave belong benefit
blame block boil borrow bother bounce breathe brush burn calculate capture celebrate challenge charge chase
chat cheer claim climb collect commit communicate compete complain complete compose concentrate conclude
conduct confuse connect contain contribute convert convince cope correct cost count crash cross cry damage
dare deal defend define deliver demand depend deserve design destroy detect determine differ dig direct
discover dismiss distribute divide dress earn edit educate eliminate emerge emphasize employ encourage engage
ensure enter establish evaluate examine exceed exchange exclude execute exercise exist expand experience
explore express extend fail fear feed fight fill finish fit float focus fold force form found gather
generate greet guarantee hang hurry identify illustrate implement imply impose improve indicate influence
inform insist inspire intend interpret introduce invest involve jump justify kick knock land laugh lay lie
lift link locate maintain manage mark match matter mention mind mix modify negotiate obtain occupy occur
operate organize overcome owe own paint perform permit persuade pick plant possess post pour practise predict
present preserve press pretend prevent proceed process promote propose protect purchase pursue qualify
question reach react recall recognize recommend recover reduce refer reflect refuse regard register relate
relax rely repair repeat replace represent request rescue reserve resist resolve respond rest restrict retain
retire reveal ring rise risk roll rush save score secure seek shake shape shift shoot shout sing sink sleep
slide smile solve sort specify spread squeeze stick store strike struggle study submit succeed suffer supply
surround survive suspect swim switch tackle talk target taste tend thank threaten throw tie touch transform
translate treat trust turn undergo update urge value vary visit wake wander wear weigh wish worry wrap yield
""".split()

ADJECTIVES = """
new good first last long great little own other old right big high different small large next early young
important few public bad same able late hard major better economic strong possible whole free military true
federal international full special easy clear recent certain personal open red difficult available likely
short single medical current wrong private past foreign fine common poor natural significant similar hot dead
central happy serious ready simple left physical general environmental financial blue democratic dark various
entire close legal religious cold final main green nice huge popular traditional cultural wide safe slow fast
quick quiet loud clean dirty empty busy heavy light cheap expensive rich deep shallow narrow broad thick thin
warm cool dry wet soft sharp smooth rough flat round square tiny brief rare frequent regular daily weekly
monthly annual manual automatic optional required default custom global local remote internal external primary
secondary temporary permanent stable unstable flaky broken healthy degraded stale fresh valid invalid unknown
missing duplicate redundant obsolete deprecated experimental legacy modern minimal verbose noisy silent
critical urgent blocking minor trivial expensive lightweight heavyweight readable consistent inconsistent
correct incorrect accurate precise vague explicit implicit strict lenient secure insecure encrypted public
private shared isolated concurrent parallel sequential synchronous asynchronous idempotent atomic durable
transient persistent volatile immutable mutable nested flat sorted unsorted unique random deterministic
predictable slow-moving careful careless polite rude friendly formal informal casual direct honest patient
strict relaxed tired curious eager nervous calm proud grateful sorry glad upset worried confident quiet
academic accessible active actual additional adequate advanced afraid aggressive alive alternative amazing
ancient angry annual anxious apparent appropriate attractive automatic aware awful basic beautiful
beneficial bitter blank bold boring brave bright brilliant capable chemical chief civil classic clever
comfortable commercial competitive complete complex comprehensive concerned confused conscious conservative
constant constructive contemporary convenient creative criminal crucial curious dangerous decent definite
dependent desperate detailed developing digital distinct domestic dramatic eager efficient elderly electric
electronic elegant emotional emergency enormous equal essential ethical everyday evident exact excellent
exciting existing expected expert extensive extra extreme fair faithful familiar famous fantastic favorite
fierce firm fixed flexible fluent foolish formal fortunate frank frightened functional fundamental funny
generous gentle genuine glorious golden gradual grand guilty handsome harmful helpful hidden historic
honest horrible hostile ideal identical illegal immediate immense impressive inadequate incredible
independent industrial inevitable informal initial innocent intelligent intense interested interesting
joint junior keen key kind lazy leading lengthy liberal limited literary lively logical lonely loose lovely
loyal lucky mad magic mental mere mild mobile moderate modest moral multiple mutual mysterious nasty
native necessary negative nervous neutral normal notable numerous objective obvious occasional odd official
operational opposite ordinary organic original outstanding overall painful parallel partial particular
passive peaceful perfect petty plain pleasant political positive potential powerful practical pregnant
present pretty previous principal prior productive professional profound progressive prominent proper
psychological pure rapid rational raw realistic reasonable relevant reliable remarkable representative
residential respectable responsible reverse ridiculous robust romantic rural sacred satisfied scared
scientific senior sensible sensitive separate severe sexual sheer shy sick significant silly sincere
skilled slight smart solid sophisticated sound spare specific spiritual splendid spontaneous steady sticky
straight strange striking structural stupid subtle successful sudden sufficient suitable superb superior
supreme sure surprising suspicious sweet technical terrible thick thorough tight tough typical ugly ultimate
unable underlying unexpected unfair unhappy uniform unlikely unusual upper useful usual valuable vast
verbal visible visual vital vulnerable weak weird wild willing wise wonderful worthy
""".split()

ADVERBS = """
quickly slowly carefully usually always never often sometimes rarely again already still soon later early
first finally only also just almost nearly quite rather really very too enough directly manually
automatically explicitly silently safely locally remotely together separately instead twice daily weekly
immediately eventually recently currently probably clearly easily mostly partly fully completely
actually apparently briefly constantly deliberately exactly frequently generally gently gradually hardly
honestly largely mainly merely naturally normally obviously occasionally officially openly originally
perfectly personally possibly precisely previously primarily properly quietly readily regularly relatively
roughly seriously simply slightly smoothly specifically strictly strongly suddenly surely temporarily
thoroughly typically ultimately unfortunately widely
""".split()

TECH = """
python typescript javascript rust golang java kotlin swift bash sql graphql rest grpc json yaml toml csv
markdown html css react vue svelte nextjs django flask fastapi express rails spring node deno bun npm pnpm
yarn pip poetry uv cargo maven gradle docker podman kubernetes helm terraform ansible nginx envoy traefik
redis memcached postgres postgresql mysql sqlite mongodb cassandra elasticsearch opensearch kafka rabbitmq
nats celery airflow spark pandas numpy pytorch tensorflow onnx tokenizer embedding vector transformer
prometheus grafana datadog sentry opentelemetry jaeger loki pagerduty slack jira confluence github gitlab
bitbucket jenkins circleci buildkite aws gcp azure s3 lambda cloudfront cloudflare route53 iam vpc ec2 ecs
eks fargate dynamodb bigquery snowflake dbt looker stripe twilio sendgrid auth0 okta oauth oidc saml jwt tls
ssl ssh vpn dns cdn http websocket webhook cron systemd linux macos windows ubuntu debian alpine arm64 x86
wasm llvm gcc clang cmake bazel make pytest jest vitest playwright cypress selenium mypy ruff eslint prettier
black isort pylint pre-commit dependabot renovate semver changelog monorepo microservice serverless
middleware orm codegen linter formatter debugger profiler flamegraph heap stack mutex semaphore goroutine
coroutine asyncio eventloop threadpool gc jit bytecode runtime interpreter compiler
api sdk cli gui ide repo kernel container pod namespace ingress sidecar daemon proxy firewall load-balancer
hashmap btree trie bloom-filter lru heap queue pubsub cqrs saga outbox idempotency backpressure circuit-breaker
rate-limiter feature-flag canary blue-green hotfix postmortem runbook oncall sla slo sli p99 cpu gpu ram ssd
nvme raid zfs ext4 inode utf-8 ascii regex glob diff hunk rebase cherry-pick bisect stash submodule lfs
vscode neovim tmux zsh fish homebrew apt nix conda jupyter notebook parquet avro protobuf msgpack base64
sha256 bcrypt argon2 hmac nonce csrf cors xss ssrf
""".split()

PROJECTS = tuple(
    f"github.com/acme/{name}"
    for name in (
        "api web billing search mobile infra auth docs cli data-pipeline ml-platform notifications payments "
        "analytics gateway scheduler storage admin chat sdk"
    ).split()
)
TYPE_WEIGHTS = {"fact": 36, "procedure": 22, "episode": 18, "collaboration-policy": 10, "note": 9, "document": 5}
TAG_WORDS = "howto incident preference gotcha decision security performance testing deploy onboarding".split()
NAMED_ERRORS = """
ERR_CONN_RESET ERR_CONN_REFUSED ERR_TLS_CERT_ALTNAME_INVALID ERR_OSSL_EVP_UNSUPPORTED ERR_MODULE_NOT_FOUND
ERR_INVALID_ARG_TYPE ERR_STREAM_PREMATURE_CLOSE ERR_HTTP2_STREAM_ERROR ECONNREFUSED ECONNRESET ETIMEDOUT
ENOSPC EADDRINUSE EACCES ENOENT EMFILE OOMKilled CrashLoopBackOff ImagePullBackOff SIGSEGV SIGKILL
SQLSTATE_40001 SQLSTATE_23505 HTTP_429 HTTP_503 PGRST116 CERT_HAS_EXPIRED DEPTH_ZERO_SELF_SIGNED_CERT
""".split()
COMMANDS = (
    "make test", "git rebase -i main", "pytest -x -q", "docker compose up -d", "kubectl get pods -A",
    "npm run build", "cargo check", "uv sync", "terraform plan", "helm upgrade --install", "ruff check .",
    "git bisect run", "psql -c 'select 1'", "redis-cli info", "journalctl -u app -f", "curl -sS localhost:8080/health",
)
UNITS = "seconds minutes hours days requests rows files users retries megabytes".split()
MODALS = "should must can will may might could would".split()

SENTENCES = (
    "The {k} {m} {v} the {a} {n} before {t} starts.",
    "We {v} the {k} every {n} so the {ns} stay {a}.",
    "If the {K} {n} is {a}, {v} the {k} first.",
    "Do not {v} the {k} while the {t} {n} is running.",
    "Our {n} uses {K} to {v} {ns} {d}.",
    "It is {a} to {v} the {k} when the {n} changes.",
    "You can {v} the {a} {k} from the {t} {n}.",
    "Last {n} the {k} was {a} because the {t} {n} was {a}.",
    "The {a} {ns} in {K} {v} {d} when the {k} grows.",
    "Most {ns} {v} the {k} through {t}.",
    "Ask the {n} owner before you {v} the {k}.",
    "This {n} keeps the {k} {a} and the {ns} {a}.",
    "To {v} the {k}, open the {t} {n} and {v} the {a} {n}.",
    "There are about {c} {ns} in the {k}, and each one has a {a} {n}.",
    "The {k} and the {n} {v} together, so {v} both.",
    "When {K} is {a}, the {k} {m} {v} {d}.",
    "Remember that the {n} is not the same as the {k}.",
    "The {t} {n} {m} {v} up to {c} {ns} at once.",
    "The {k} is {a} because the {n} {m} not {v} the {t} {n}.",
    "Keep the {k} {a}; {a} {ns} are hard to {v}.",
    "Everyone on the {n} agreed to {v} the {k} {d}.",
    "A {a} {n} in the {k} usually means the {K} {n} is {a}.",
    "The user prefers {a} {ns} and wants the {k} to stay {a}.",
    "First {v} the {k}, then {v} the {n}, and finally {v} the {t} {n}.",
    "In {K}, the {k} lives next to the {n}.",
    "We tried to {v} the {k} with {t}, but the {n} was too {a}.",
    "The {n} for the {k} is {a}, which is why we {v} it {d}.",
    "Check the {k} {n} whenever the {t} {n} looks {a}.",
    "Nobody should {v} the {k} without a {a} {n}.",
    "The fix was to {v} the {n} and {v} the {k} in {K}.",
    "{K} will {v} the {k} if the {n} is {a}.",
    "The {a} {n} of the {k} took about {c} {u}.",
    "Please {v} the {k} {d} and leave the {n} alone.",
    "Each {n} has its own {k}, so {v} them one at a time.",
    "The old {k} was replaced by a {a} {n} in {K}.",
    "Only {v} the {k} on a {a} {n}.",
    "Run `{cmd}` to {v} the {k}.",
    "The {k} settings live in `{path}`.",
)
ERROR_SENTENCES = (
    "The {t} {n} failed with {e} after the {k} changed.",
    "If you see {e}, {v} the {k} and retry.",
    "{e} means the {K} {n} could not {v} the {k}.",
    "We saw {e} in the {n} log right after the {k} {n}.",
)
TRIGGERS = (
    "When you {v} the {k} in {K}.",
    "Before changing the {k} {n}.",
    "When the {K} {n} looks {a}.",
    "If asked to {v} the {k}.",
    "When working on the {k} or the {n}.",
)
QUESTIONS = (
    "how do we {v} the {k} in {K}?",
    "what is the {a} {k} for {K}",
    "why does the {k} {n} {v} {d}?",
    "when should I {v} the {k} {n}",
    "where is the {k} {n} configured in {K}?",
    "what did we decide about the {k} and {K}?",
    "{K} {k} {n}",
    "how to {v} {k} with {t}",
)
ERROR_QUESTIONS = ("{e}", "what causes {e} in {K}?", "{e} {k}")
# Three fixed searches over the vocabulary, the same in every vault (the sync and freshness benchmarks time them).
QUERIES = ("which group uses buildkite", "the release that uses sqlite", "how to select the hall city")

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
_BASE_MS = 1_700_000_000_000
TOPICS = 400


def _unique(words: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(words))


def _encode(value: int, length: int) -> str:
    return "".join(_ALPHABET[(value >> (5 * n)) & 31] for n in reversed(range(length)))


def _zipf_weights(count: int, offset: float = 8.0) -> list[float]:
    return [1.0 / (rank + offset) for rank in range(count)]


def vocabulary() -> tuple[str, ...]:
    """Every distinct word the generator draws from (templates aside)."""
    return _unique(list(NOUNS) + list(VERBS) + list(ADJECTIVES) + list(ADVERBS) + list(TECH))


@dataclass(frozen=True, slots=True)
class Topic:
    keywords: tuple[str, ...]  # nouns the memories of this topic keep returning to
    tech: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SyntheticMemory:
    """One generated record and what it is about (to build queries with known answers)."""

    index: int
    id: str
    record: dict[str, Any]
    topic: Topic
    code: str | None

    @property
    def project(self) -> str | None:
        value = self.record.get("project")
        return value if isinstance(value, str) else None

    @property
    def type(self) -> str:
        return str(self.record["type"])


@dataclass(frozen=True, slots=True)
class Query:
    text: str
    project: str | None
    types: tuple[str, ...]
    source_id: str  # the memory the query was written about
    kind: str  # "question", "rare", "project", "type"


# Slot name -> words, and their cumulative Zipf weights (precomputed: random.choices is O(n) otherwise).
POOLS: dict[str, tuple[str, ...]] = {
    "n": _unique(NOUNS), "v": _unique(VERBS), "a": _unique(ADJECTIVES), "d": _unique(ADVERBS), "t": _unique(TECH),
}
_CUMULATIVE = {slot: list(itertools.accumulate(_zipf_weights(len(words)))) for slot, words in POOLS.items()}


class _Words:
    """Zipf-weighted word draws for one RNG."""

    def __init__(self, rng: random.Random, topic: Topic, code: str | None):
        self.rng = rng
        self.topic = topic
        self.code = code

    def draw(self, slot: str) -> str:
        return self.rng.choices(POOLS[slot], cum_weights=_CUMULATIVE[slot])[0]

    def _value(self, name: str) -> str:
        rng = self.rng
        if name in ("n", "v", "a", "d", "t"):
            return self.draw(name)
        if name == "ns":
            return plural(self.draw("n"))
        if name == "k":
            return rng.choice(self.topic.keywords)
        if name == "K":
            return rng.choice(self.topic.tech)
        if name == "m":
            return rng.choice(MODALS)
        if name == "c":
            return str(rng.choice((2, 3, 5, 10, 20, 50, 100, 250, 1000)))
        if name == "u":
            return rng.choice(UNITS)
        if name == "cmd":
            return rng.choice(COMMANDS)
        if name == "e":
            return self.code or ""
        if name == "path":
            return f"src/{rng.choice(self.topic.keywords)}/{self.draw('n')}.{rng.choice(('py', 'ts', 'toml'))}"
        raise KeyError(name)

    def fill(self, template: str, capitalize: bool = True) -> str:
        """``template`` with every ``{slot}`` replaced by a fresh draw."""
        out = []
        rest = template
        while "{" in rest:
            before, _, after = rest.partition("{")
            name, _, rest = after.partition("}")
            out.append(before)
            out.append(self._value(name))
        out.append(rest)
        text = "".join(out)
        return text[0].upper() + text[1:] if capitalize else text


class Generator:
    """Synthetic memories and queries for one seed."""

    def __init__(self, seed: int = 7):
        self.seed = seed
        rng = random.Random(f"topics:{seed}")
        nouns, tech = POOLS["n"], POOLS["t"]
        self.topics = tuple(
            Topic(tuple(rng.sample(nouns, 3)), tuple(rng.sample(tech, 2))) for _ in range(TOPICS)
        )
        self._topic_weights = list(itertools.accumulate(_zipf_weights(TOPICS, offset=20.0)))
        self._project_weights = list(itertools.accumulate(_zipf_weights(len(PROJECTS), offset=4.0)))

    def memory_id(self, index: int) -> str:
        rng = random.Random(f"id:{self.seed}:{index}")
        return "m-" + _encode(_BASE_MS + index, 10) + _encode(rng.getrandbits(80), 16)

    def memory(self, index: int) -> SyntheticMemory:
        rng = random.Random(f"memory:{self.seed}:{index}")
        topic = rng.choices(self.topics, cum_weights=self._topic_weights)[0]
        code = None
        if rng.random() < 0.06:
            code = f"E{rng.randint(1000, 9999)}" if rng.random() < 0.5 else rng.choice(NAMED_ERRORS)
        words = _Words(rng, topic, code)
        kind = rng.choices(list(TYPE_WEIGHTS), weights=list(TYPE_WEIGHTS.values()))[0]
        record: dict[str, Any] = {"id": self.memory_id(index), "title": self._title(words, kind), "type": kind}
        if rng.random() < 0.7:
            record["scope"] = "project"
            record["project"] = rng.choices(PROJECTS, cum_weights=self._project_weights)[0]
        else:
            record["scope"] = "global"
        summary = [words.fill(rng.choice(SENTENCES)) for _ in range(rng.choice((1, 1, 2, 2, 3)))]
        if code and rng.random() < 0.3:
            summary[-1] = words.fill(rng.choice(ERROR_SENTENCES))
        record["summary"] = " ".join(summary)
        if rng.random() < 0.2:
            record["trigger"] = words.fill(rng.choice(TRIGGERS))
        tags = {rng.choice(topic.tech), rng.choice(topic.keywords), rng.choice(TAG_WORDS)}
        record["tags"] = sorted(tags)[: rng.randint(0, 4)]
        record["body"] = self._body(words, code)
        return SyntheticMemory(index, record["id"], record, topic, code)

    def memories(self, count: int, start: int = 0) -> Iterator[SyntheticMemory]:
        for index in range(start, start + count):
            yield self.memory(index)

    def _title(self, words: _Words, kind: str) -> str:
        rng = words.rng
        k, big_k = rng.choice(words.topic.keywords), rng.choice(words.topic.tech)
        if kind == "procedure":
            parts = ["How", "to", words.draw("v"), "the", k, words.draw("n")]
        elif kind == "collaboration-policy":
            parts = [rng.choice(("Always", "Never", "Prefer to")), words.draw("v"), "the", k]
        elif kind == "episode":
            parts = [words.draw("a").capitalize(), k, words.draw("n"), "in", big_k]
        else:
            parts = ["The", k, words.draw("n"), "uses", big_k]
        extras = [["for", "the", words.draw("a"), words.draw("n")], ["with", words.draw("t")],
                  ["and", words.draw("n")], ["during", words.draw("n")]]
        rng.shuffle(extras)
        want = rng.randint(4, 10)
        base = " ".join(parts).split()
        words_out = list(base)
        for extra in extras:
            if len(words_out) >= want:
                break
            words_out += extra
        words_out = words_out[:max(want, len(base))]
        while words_out[-1] in ("the", "for", "with", "and", "during", "to", "in"):
            words_out.pop()
        if words.code and rng.random() < 0.3:
            words_out = [*words_out[:9], words.code]
        title = " ".join(words_out)
        return title[0].upper() + title[1:]

    def _body(self, words: _Words, code: str | None) -> str:
        rng = words.rng
        target = int(rng.triangular(50, 300, 120))
        paragraphs: list[str] = []
        sentences: list[str] = []
        count = 0
        error_at = rng.randint(0, 3) if code else -1
        while count < target:
            if len(sentences) == error_at:
                sentence = words.fill(rng.choice(ERROR_SENTENCES))
            else:
                sentence = words.fill(rng.choice(SENTENCES))
            sentences.append(sentence)
            count += len(sentence.split())
            if len(sentences) >= rng.randint(3, 6):
                paragraphs.append(" ".join(sentences))
                sentences = []
                if rng.random() < 0.15 and count < target:
                    items = [f"- {words.draw('v').capitalize()} the {rng.choice(words.topic.keywords)} "
                             f"{words.draw('n')}." for _ in range(3)]
                    paragraphs.append("\n".join(items))
                    count += 3 * 4
        if sentences:
            paragraphs.append(" ".join(sentences))
        return "\n\n".join(paragraphs) + "\n"

    def queries(self, count: int, size: int, salt: str = "queries") -> list[Query]:
        """``count`` search queries about memories among the first ``size`` records."""
        rng = random.Random(f"{salt}:{self.seed}:{size}")
        out = []
        for _ in range(count):
            roll = rng.random()
            memory = self.memory(rng.randrange(size))
            project: str | None = None
            types: tuple[str, ...] = ()
            if roll < 0.12:
                kind = "rare"
                for offset in range(size):  # the next memory with a rare token (6% have one)
                    candidate = self.memory((memory.index + offset) % size)
                    if candidate.code:
                        memory = candidate
                        break
            elif roll < 0.32:
                kind = "project"
                project = memory.project or rng.choice(PROJECTS)
            elif roll < 0.47:
                kind = "type"
                types = (memory.type,) if rng.random() < 0.7 else (memory.type, "fact")
                types = tuple(dict.fromkeys(types))
            else:
                kind = "question"
            words = _Words(rng, memory.topic, memory.code)
            template = rng.choice(ERROR_QUESTIONS if kind == "rare" and memory.code else QUESTIONS)
            out.append(Query(words.fill(template, capitalize=False), project, types, memory.id, kind))
        return out


def jsonl(memories: Iterator[SyntheticMemory]) -> Iterator[str]:
    for memory in memories:
        yield json.dumps(memory.record, ensure_ascii=False)


def write_vault(vault: Vault, generator: Generator, count: int, batch_size: int = 25_000,
                progress: Callable[[int, int], None] | None = None) -> tuple[int, float]:
    """Import ``count`` records into ``vault`` in batches; returns (memories added, seconds in ``import_jsonl``).

    Generating the records is not timed.  Raises RuntimeError when any record
    was rejected or merged (the records are meant to be distinct).
    """
    added = 0
    seconds = 0.0
    for start in range(0, count, batch_size):
        size = min(batch_size, count - start)
        lines = list(jsonl(generator.memories(size, start)))
        started = time.perf_counter()
        result = vault.import_jsonl(lines, "synthetic")
        seconds += time.perf_counter() - started
        if result.errors or result.merged:
            first = result.errors[0].one_line() if result.errors else f"merged {result.merged[0]}"
            raise RuntimeError(f"import of synthetic records failed ({len(result.errors)} errors, "
                               f"{len(result.merged)} merged): {first}")
        added += len(result.added)
        if progress is not None:
            progress(added, count)
    return added, seconds


def seed_vectors(root: Path, embedder: Embedder, seed: int = 7, batch: int = 1000) -> tuple[int, int, float]:
    """Store random unit vectors for every memory file, fingerprinted as sync would.

    Sync then sees the vectors as current and embeds nothing, so a large vault
    is indexed without the model.  Returns (memories, vector rows, seconds).
    """
    import numpy as np

    from vault_engine import store
    from vault_engine.errors import MemoryFileError
    from vault_engine.index.derived import embedding_texts, text_fingerprint
    from vault_engine.index.vectors import VectorRow, VectorStore

    started = time.perf_counter()
    rng = np.random.default_rng(seed)
    vectors = VectorStore(root / store.STATE_DIR / "vectors.sqlite", embedder.name, embedder.dim)
    memories = rows = 0
    pending: list[tuple[str, str, list[VectorRow]]] = []
    try:
        for rel, path, problem in store.iter_markdown(root):
            if problem is not None or path is None:
                continue
            try:
                memory = store.read_entry(root, rel).memory
            except MemoryFileError:
                continue
            texts = embedding_texts(memory, embedder)
            matrix = rng.standard_normal((len(texts), embedder.dim)).astype(np.float32)
            matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
            pending.append((memory.id, text_fingerprint(texts),
                            [VectorRow(lane, chunk, matrix[n]) for n, (lane, chunk, _) in enumerate(texts)]))
            memories += 1
            rows += len(texts)
            if len(pending) >= batch:
                vectors.put_many(pending)
                pending = []
        if pending:
            vectors.put_many(pending)
    finally:
        vectors.close()
    return memories, rows, time.perf_counter() - started


def count_tokens(root: Path, embedder: Embedder, window: int = 256, batch: int = 512) -> tuple[int, int]:
    """(texts, tokens) that embedding every memory takes: each distinct text the model reads once, as it reads it
    (see :func:`vault_engine.index.embedding_cache.model_text`), cut at ``window`` tokens as the model does."""
    from vault_engine import store
    from vault_engine.errors import MemoryFileError
    from vault_engine.index.derived import embedded_parts, embedding_texts, parse_span
    from vault_engine.index.embedding_cache import model_text

    tokenizer = embedder._token_tool()  # type: ignore[attr-defined]
    seen: set[str] = set()
    tokens = 0
    pending: list[str] = []

    def flush() -> int:
        return sum(min(window, len(encoding.ids)) for encoding in tokenizer.encode_batch(pending))

    for rel, path, problem in store.iter_markdown(root):
        if problem is not None or path is None:
            continue
        try:
            memory = store.read_entry(root, rel).memory
        except MemoryFileError:
            continue
        for lane, _chunk, text in embedding_texts(memory, embedder):
            for part in embedded_parts(lane, text):
                span = parse_span(part)  # a sentence pooled from its host's pass: the model reads the host
                read = model_text(span[0] if span else part, window)
                if read not in seen:
                    seen.add(read)
                    pending.append(read)
        if len(pending) >= batch:
            tokens += flush()
            pending = []
    if pending:
        tokens += flush()
    return len(seen), tokens


# ---------------------------------------------------------------- planted near-duplicates and contradictions
#
# For benchmarks/maintain.py: records with a known truth (which memory
# repeats which, which one reverses which) to score `memvault maintain`.
# Nothing above changes: a planted vault starts from the same base records.

PLANT_VERSION = "5"  # bump when planted records change, so cached vaults are rebuilt

# Word -> paraphrases (lowercase; the first letter's case is kept).  Covers the
# template words and the most drawn (Zipf-head) words of the pools above.
SYNONYMS: dict[str, tuple[str, ...]] = {
    # template words
    "before": ("prior to", "ahead of"), "every": ("each",), "each": ("every",), "stay": ("remain",),
    "first": ("initially", "to begin with"), "while": ("as",), "running": ("in progress", "active"),
    "uses": ("relies on", "works with"), "changes": ("moves", "is updated"), "last": ("past", "previous"),
    "because": ("since", "as"), "grows": ("gets bigger", "expands"), "through": ("via", "by way of"),
    "keeps": ("holds", "maintains"), "open": ("pull up", "bring up"), "finally": ("lastly", "at the end"),
    "about": ("roughly", "around"), "together": ("jointly", "as a pair"), "usually": ("typically", "often"),
    "means": ("suggests", "indicates"), "prefers": ("likes", "favours"), "wants": ("would like", "expects"),
    "lives": ("sits", "resides"), "tried": ("attempted",), "too": ("overly", "excessively"),
    "whenever": ("each time", "any time"), "looks": ("seems", "appears"), "owner": ("maintainer", "lead"),
    "agreed": ("decided", "settled on a plan"), "took": ("needed", "lasted"), "please": ("kindly",),
    "alone": ("untouched", "be"), "remember": ("keep in mind", "note"), "hard": ("difficult", "tough"),
    "same": ("identical", "one and the same"), "everyone": ("everybody", "all of us"), "own": ("separate",),
"fix": ("remedy", "repair"), "ask": ("check with", "consult"),
    "check": ("inspect", "look at"), "settings": ("configuration", "options"), "user": ("person", "customer"),
    "nobody": ("no one",), "without": ("lacking",), "run": ("execute", "invoke"), "old": ("former", "previous"),
    "only": ("just", "solely"), "next": ("adjacent",), "leave": ("let", "keep"), "keep": ("retain", "hold"),
    "starts": ("begins", "kicks off"), "most": ("the majority of", "nearly all"), "both": ("the two",),
    "then": ("next", "after that"), "which": ("and that", "this"), "log": ("logs", "journal"),
    # Zipf-head nouns
    "time": ("period", "moment"), "year": ("twelve months",), "people": ("folks", "persons"),
    "thing": ("item", "matter"), "way": ("approach", "method"), "day": ("date", "workday"),
    "school": ("academy",), "hand": ("help",), "life": ("lifetime",), "place": ("location", "spot"),
    "state": ("status", "condition"), "family": ("household",), "world": ("globe",), "part": ("piece", "portion"),
    "group": ("team", "cluster"), "country": ("nation",), "week": ("seven days",), "case": ("instance", "situation"),
    "problem": ("issue", "trouble"), "issue": ("problem", "concern"), "point": ("spot", "moment"),
    "program": ("application", "app"), "question": ("query", "inquiry"), "number": ("count", "figure"),
    "money": ("funds", "cash"), "system": ("platform", "setup"), "book": ("volume",), "service": ("component",),
    "change": ("update", "modification"), "idea": ("notion", "thought"), "story": ("account", "narrative"),
    "fact": ("detail",), "word": ("term",), "business": ("company",), "company": ("business", "firm"),
    "information": ("details", "info"), "result": ("outcome",), "work": ("effort", "labour"),
    "job": ("task",), "task": ("job", "chore"), "error": ("fault", "failure"), "bug": ("defect", "glitch"),
    "file": ("document",), "folder": ("directory",), "request": ("call",), "team": ("group", "crew"),
    "queue": ("backlog",), "study": ("analysis",), "area": ("region", "zone"), "room": ("space",),
    "level": ("tier",), "home": ("house",), "night": ("evening",), "line": ("row",), "month": ("four weeks",),
    # Zipf-head verbs (base forms, as the templates use them)
    "have": ("hold", "own"), "make": ("create", "produce"), "get": ("obtain", "fetch"), "say": ("state", "mention"),
    "go": ("proceed", "move"), "know": ("understand",), "take": ("grab", "pick"), "see": ("view", "notice"),
    "come": ("arrive",), "think": ("consider", "reckon"), "look": ("glance",), "want": ("need", "wish"),
    "give": ("provide", "hand over"), "use": ("employ", "utilise"), "find": ("locate", "discover"),
    "tell": ("inform", "let know"), "seem": ("appear",), "feel": ("sense",), "try": ("attempt",),
    "call": ("invoke", "phone"), "begin": ("start", "commence"), "help": ("assist", "support"),
    "show": ("display", "present"), "hear": ("learn",), "let": ("allow",), "move": ("shift", "relocate"),
    "live": ("reside",), "hold": ("keep", "retain"), "bring": ("carry", "fetch"), "write": ("record", "note down"),
    "test": ("exercise", "probe"), "deploy": ("ship", "roll out"), "review": ("inspect", "go over"),
    "restart": ("reboot", "bounce"), "remove": ("delete", "drop"), "delete": ("remove", "erase"),
    "build": ("compile", "assemble"), "start": ("begin", "launch"), "stop": ("halt", "end"),
    # Zipf-head adjectives and adverbs
    "new": ("fresh", "recent"), "good": ("solid", "decent"), "long": ("lengthy", "extended"),
    "great": ("excellent", "superb"), "little": ("small", "tiny"), "big": ("large", "huge"),
    "large": ("big", "sizeable"), "small": ("little", "compact"), "high": ("elevated", "tall"),
    "different": ("distinct", "other"), "early": ("initial", "premature"), "important": ("crucial", "key"),
    "bad": ("poor", "faulty"), "able": ("capable",), "late": ("delayed", "overdue"), "major": ("significant",),
    "right": ("correct", "proper"), "public": ("open",), "young": ("new",), "few": ("handful of",),
    "quickly": ("rapidly", "fast"), "slowly": ("gradually",), "carefully": ("cautiously", "with care"),
    "always": ("consistently",), "often": ("frequently",), "sometimes": ("occasionally", "at times"),
    "again": ("once more",), "already": ("by then",), "still": ("yet",), "soon": ("shortly",),
    "later": ("afterwards",), "also": ("as well",), "just": ("simply",), "almost": ("nearly",),
    "nearly": ("almost",), "quite": ("fairly", "pretty"), "really": ("truly",), "very": ("highly", "extremely"),
    "directly": ("straight",), "manually": ("by hand",), "automatically": ("on its own",),
    "immediately": ("at once", "right away"), "recently": ("lately",), "currently": ("presently",),
    "probably": ("likely",), "clearly": ("plainly", "obviously"), "easily": ("readily",), "mostly": ("largely",),
}
CONTRACTIONS = (
    ("do not", "don't"), ("does not", "doesn't"), ("is not", "isn't"), ("was not", "wasn't"),
    ("are not", "aren't"), ("it is", "it's"), ("should not", "shouldn't"), ("must not", "mustn't"),
    ("will not", "won't"), ("could not", "couldn't"), ("would not", "wouldn't"), ("can not", "cannot"),
    ("that is", "that's"), ("there are", "there're"), ("we are", "we're"),
)
ADDED_SENTENCES = (
    "This came up again while working on the {k} {n}.",
    "Double-check this before touching the {k}.",
    "I confirmed this with the {k} team last week.",
    "See also the notes about {K}.",
    "Worth keeping in mind for the {k} work.",
    "The same applies to the {k} {n} in {K}.",
)
# Episodes and documents are raw records (two alike episodes are two events): maintain never merges them,
# so near-duplicates are planted only for the other types.
DUPLICATE_TYPES = frozenset({"fact", "procedure", "collaboration-policy", "note"})
DUPLICATE_KINDS = ("copy-retitled", "copy-edited", "paraphrase-light", "paraphrase-heavy", "condensed")
DUPLICATE_SHARES = (0.15, 0.20, 0.25, 0.25, 0.15)
CONTRADICTION_KINDS = ("negation", "no-longer", "switch", "value")

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`])")
_TOKEN = re.compile(r"[A-Za-z][A-Za-z'-]*")


def _keep_case(original: str, replacement: str) -> str:
    return replacement[0].upper() + replacement[1:] if original[:1].isupper() else replacement


def substitute(text: str, rng: random.Random, share: float) -> str:
    """``text`` with each word that has a synonym replaced with probability ``share`` (code spans kept)."""
    pieces = text.split("`")
    for n in range(0, len(pieces), 2):  # even pieces are outside `code`
        def swap(match: re.Match[str]) -> str:
            word = match.group(0)
            options = SYNONYMS.get(word.lower())
            if not options or rng.random() >= share:
                return word
            return _keep_case(word, rng.choice(options))

        pieces[n] = _TOKEN.sub(swap, pieces[n])
    return "`".join(pieces)


def contract(text: str) -> str:
    """Contractions (``do not`` -> ``don't``), as a person might write the same note."""
    for long, short in CONTRACTIONS:
        text = re.sub(rf"\b{long}\b", short, text)
        text = re.sub(rf"\b{long.capitalize()}\b", short.capitalize(), text)
    return text


def _paragraphs(body: str) -> list[list[str]]:
    """Body paragraphs as sentence lists (a bullet list is one unsplit item)."""
    out = []
    for block in body.strip().split("\n\n"):
        if block.startswith("- "):
            out.append([block])
        else:
            out.append(_SENTENCE_END.split(block.strip()))
    return out


def _join(paragraphs: list[list[str]]) -> str:
    return "\n\n".join(" ".join(p) for p in paragraphs if p) + "\n"


def _sentence_slots(paragraphs: list[list[str]]) -> list[tuple[int, int]]:
    return [(p, s) for p, sentences in enumerate(paragraphs) for s, text in enumerate(sentences)
            if not text.startswith("- ")]


def retitle(title: str, rng: random.Random, share: float) -> str:
    """A reworded title: the title template's phrasing changed, then synonyms."""
    patterns = (
        (r"^How to (\w+) (.*)$", ("Steps to {0} {1}", "Guide: {0} {1}", "{0} {1}: how-to")),
        (r"^Always (.*)$", ("{0} every time", "Make sure to {0}")),
        (r"^Never (.*)$", ("Do not ever {0}", "Avoid: {0}")),
        (r"^Prefer to (.*)$", ("Better to {0}", "Preferably {0}")),
        (r"^The (\w+ \w+) uses (\S+)(.*)$", ("{1} is used by the {0}{2}", "The {0} relies on {1}{2}")),
        (r"^(\w+) (\w+ \w+) in (\S+)(.*)$", ("{2}: {0} {1}{3}", "{0} {1} ({2}){3}")),
    )
    for pattern, forms in patterns:
        match = re.match(pattern, title)
        if match:
            title = rng.choice(forms).format(*match.groups())
            break
    title = substitute(title, rng, share)
    return title[0].upper() + title[1:]


def near_duplicate(memory: SyntheticMemory, kind: str, rng: random.Random) -> dict[str, Any]:
    """A record that repeats ``memory`` (same scope, project, type, tags, trigger), written as ``kind`` says.

    - copy-retitled: the same words; the title's case or punctuation differs and
      two sentences are joined with a semicolon (the import folds byte-equal text).
    - copy-edited: one sentence dropped or one word changed.
    - paraphrase-light: sentences reordered within paragraphs, ~35% of the
      words that have a synonym swapped, contractions, a reworded title and summary.
    - paraphrase-heavy: as light with ~70% swapped, one sentence dropped and one
      added, paragraphs reordered.
    - condensed: the first half of the sentences only, lightly reworded; the
      summary's first sentence.
    """
    record = {k: v for k, v in memory.record.items() if k not in ("id", "title", "summary", "body")}
    title, summary, body = memory.record["title"], memory.record["summary"], memory.record["body"]
    paragraphs = _paragraphs(body)
    slots = _sentence_slots(paragraphs)
    k, big_k = rng.choice(memory.topic.keywords), rng.choice(memory.topic.tech)
    if kind == "copy-retitled":
        title = rng.choice((title.lower(), title + ".", title.title()))
        joinable = [(p, s) for p, s in slots if s + 1 < len(paragraphs[p]) and paragraphs[p][s].endswith(".")]
        if joinable:
            p, s = rng.choice(joinable)
            paragraphs[p][s] = paragraphs[p][s][:-1] + ";"
        else:
            p, s = rng.choice(slots)
            paragraphs[p][s] = paragraphs[p][s].rstrip(".")
    elif kind == "copy-edited":
        if len(slots) > 3 and rng.random() < 0.5:
            p, s = rng.choice(slots)
            del paragraphs[p][s]
        else:
            for p, s in rng.sample(slots, len(slots)):
                edited = substitute(paragraphs[p][s], rng, 1.0)
                if edited != paragraphs[p][s]:
                    words_old, words_new = paragraphs[p][s].split(" "), edited.split(" ")
                    # one changed word only: keep the first difference
                    for n, (a, b) in enumerate(zip(words_old, words_new, strict=False)):
                        if a != b:
                            paragraphs[p][s] = " ".join([*words_old[:n], b, *words_old[n + 1:]])
                            break
                    break
            else:
                p, s = rng.choice(slots)
                paragraphs[p][s] = paragraphs[p][s].rstrip(".") + " too."
    elif kind in ("paraphrase-light", "paraphrase-heavy"):
        share = 0.35 if kind == "paraphrase-light" else 0.7
        for sentences in paragraphs:
            if not sentences[0].startswith("- "):
                rng.shuffle(sentences)
        if kind == "paraphrase-heavy":
            if len(slots) > 3:
                p, s = rng.choice(_sentence_slots(paragraphs))
                del paragraphs[p][s]
            added = rng.choice(ADDED_SENTENCES).format(k=k, n=rng.choice(POOLS["n"][:60]), K=big_k)
            rng.choice([p for p in paragraphs if p and not p[0].startswith("- ")] or paragraphs).append(added)
            rng.shuffle(paragraphs)
        paragraphs = [[contract(substitute(s, rng, share)) for s in sentences] for sentences in paragraphs]
        title = retitle(title, rng, share)
        summary = contract(substitute(summary, rng, share))
    elif kind == "condensed":
        keep = max(1, len(slots) // 2)
        kept = set(slots[:keep])
        paragraphs = [[s for n, s in enumerate(sentences) if (p, n) in kept]
                      for p, sentences in enumerate(paragraphs)]
        paragraphs = [[contract(substitute(s, rng, 0.35)) for s in sentences] for sentences in paragraphs]
        title = retitle(title, rng, 0.35)
        summary = substitute(_SENTENCE_END.split(summary)[0], rng, 0.35)
    else:
        raise ValueError(f"unknown near-duplicate kind {kind!r}")
    record.update(title=title, summary=summary, body=_join(paragraphs))
    return record


# Short facts: (statement, negated, "no longer", switched) with {k} {n} {K} {K2} {ns} slots.
FACTS = (
    ("The {k} {n} uses {K} for {ns}.", "The {k} {n} does not use {K} for {ns}.",
     "The {k} {n} no longer uses {K} for {ns}.", "The {k} {n} switched from {K} to {K2} for {ns}."),
    ("We deploy the {k} {n} with {K}.", "We do not deploy the {k} {n} with {K}.",
     "We no longer deploy the {k} {n} with {K}.", "We switched the {k} {n} deploys from {K} to {K2}."),
    ("The {k} {n} stores its {ns} in {K}.", "The {k} {n} does not store its {ns} in {K}.",
     "The {k} {n} no longer stores its {ns} in {K}.", "The {k} {n} moved its {ns} from {K} to {K2}."),
    ("{K} handles {ns} for the {k} {n}.", "{K} does not handle {ns} for the {k} {n}.",
     "{K} no longer handles {ns} for the {k} {n}.", "{K2} now handles {ns} for the {k} {n} instead of {K}."),
    ("The {k} {n} sends its {ns} to {K}.", "The {k} {n} never sends its {ns} to {K}.",
     "The {k} {n} does not send its {ns} to {K} anymore.", "The {k} {n} sends its {ns} to {K2} now, not {K}."),
)
FACT_NOUNS = ("service", "worker", "pipeline", "cache", "queue", "job", "client", "gateway", "scheduler",
              "importer", "exporter", "backend", "frontend", "cron job", "webhook handler", "search index")
FACT_PURPOSES = ("sessions", "uploads", "metrics", "invoices", "logs", "events", "emails", "backups",
                 "reports", "thumbnails", "audit records", "feature flags", "search results", "payments")
FACT_VALUES = (
    ("Requests time out after {N} seconds.", (5, 10, 15, 20, 30, 45, 60, 90, 120)),
    ("It keeps {N} replicas in production.", (2, 3, 4, 5, 6, 8)),
    ("The batch size is {N} records.", (50, 100, 200, 250, 500, 1000)),
    ("Cached entries expire after {N} minutes.", (1, 5, 10, 15, 30, 60)),
    ("Failed calls are retried {N} times.", (2, 3, 4, 5, 8, 10)),
    ("It listens on port {N}.", (3000, 5000, 8000, 8080, 8443, 9090)),
)
FACT_CONTEXT = (
    "Ask the {k} team before changing it.", "Priya set this up in {month}.", "This is written down in the runbook.",
    "The {k} dashboard shows it.", "Agreed in the {month} planning meeting.", "", "",
)
MONTHS = "January February March April May June July August September October November December".split()


def fact_pair(generator: Generator, index: int, kind: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(older, newer) records: a short fact and a later memory that reverses it as ``kind`` says.

    negation: the statement negated; no-longer: "no longer" / "not ... anymore";
    switch: moved from one tool to another (some phrasings have no update
    keyword next to the verb); value: the same text with another number.  The
    newer one keeps the older one's value and context sentences (value: all
    but the number).
    """
    rng = random.Random(f"fact:{generator.seed}:{index}")
    topic = rng.choice(generator.topics)
    k = rng.choice(topic.keywords)
    tech = [t for t in TECH if t not in topic.tech]
    big_k = rng.choice(topic.tech)
    big_k2 = rng.choice(tech)
    slots = {"k": k, "n": rng.choice(FACT_NOUNS), "K": big_k, "K2": big_k2, "ns": rng.choice(FACT_PURPOSES)}
    forms = [f.format(**slots) for f in rng.choice(FACTS)]
    value, numbers = rng.choice(FACT_VALUES)
    old_n, new_n = rng.sample(numbers, 2)
    context = rng.choice(FACT_CONTEXT).format(k=k, month=rng.choice(MONTHS))
    base: dict[str, Any] = {"type": "fact", "tags": sorted({k, big_k})}
    if rng.random() < 0.7:
        base.update(scope="project", project=rng.choice(PROJECTS))
    else:
        base["scope"] = "global"

    def body(statement: str, number: int) -> str:
        return " ".join(s for s in (statement, value.format(N=number), context) if s) + "\n"

    def title(statement: str) -> str:
        return statement.rstrip(".").split(" for ")[0]

    older = {**base, "title": title(forms[0]), "body": body(forms[0], old_n)}
    if kind == "value":
        newer = {**base, "title": older["title"], "body": body(forms[0], new_n)}
    else:
        statement = forms[CONTRADICTION_KINDS.index(kind) + 1]
        newer = {**base, "title": title(statement), "body": body(statement, old_n)}
        if kind == "switch":
            newer["tags"] = sorted({k, big_k2})
    return older, newer


@dataclass(frozen=True, slots=True)
class Planted:
    """A vault's records in import order and what maintain should find in them."""

    records: list[dict[str, Any]]
    base: int  # base memories (records of the plain generator)
    duplicate_of: dict[str, str]  # planted near-duplicate id -> the original's id
    duplicate_kind: dict[str, str]
    supersedes: dict[str, str]  # newer id -> the older id it reverses
    contradiction_kind: dict[str, str]
    originals: frozenset[str]  # ids with planted near-duplicates
    superseded: frozenset[str]  # ids a planted newer memory reverses
    distinct_of: dict[str, str] = field(default_factory=dict)  # newer short note -> the older, distinct one
    family_of: dict[str, str] = field(default_factory=dict)  # id -> its family (FAMILIES), both of each pair
    family_pairs: dict[str, str] = field(default_factory=dict)  # newer -> older, of every family pair

    def cluster(self, memory_id: str) -> str | None:
        """The original a memory belongs to (itself for an original), None outside the planted duplicates."""
        if memory_id in self.duplicate_of:
            return self.duplicate_of[memory_id]
        return memory_id if memory_id in self.originals else None


DISTINCT_NAMES = ("Alpha", "Beta", "Gamma", "Delta", "Orion", "Atlas", "Nova", "Vega", "Lyra", "Juno")
DISTINCT_PEOPLE = ("Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy")
DISTINCT_TEAMS = ("web", "mobile", "platform", "data", "billing", "growth", "infra", "search")
DISTINCT_DAYS = ("Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays")
# (older, newer): short notes about two different things that share most of their words.  {a}/{b} are
# the two names (services, people, teams), {v}/{w} two versions; the newer may add one word.
DISTINCT_FORMS = (
    ("{a} service notes about {k} rollout.", "{b} service notes about {k} rollout cadence."),
    ("{a} owns the {k} {n}.", "{b} owns the {k} {n}."),
    ("{a} is the on-call contact for the {k} {n}.", "{b} is the on-call contact for the {k} {n}."),
    ("The {a} team reviews {k} changes on {day}.", "The {b} team reviews {k} changes on {day}."),
    ("The {a} {n} deploys on {day}.", "The {b} {n} deploys on {day} too."),
    ("{a} {v} keeps its {ns} in {K}.", "{b} {w} keeps its {ns} in {K}."),
    ("The {k} {n} for {a} sends {ns} to {K}.", "The {k} {n} for {b} sends {ns} to {K}."),
    ("Release notes for {a} {v} live in the {k} wiki.", "Release notes for {b} {w} live in the {k} wiki."),
)


def distinct_pair(generator: Generator, index: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """(older, newer) records: two short notes about different things (a name, a team, a service and
    version) that share most of their words; they must never merge."""
    rng = random.Random(f"distinct:{generator.seed}:{index}")
    topic = rng.choice(generator.topics)
    form = DISTINCT_FORMS[index % len(DISTINCT_FORMS)]
    names = DISTINCT_PEOPLE if "owns" in form[0] or "on-call" in form[0] else (
        DISTINCT_TEAMS if "team" in form[0] else DISTINCT_NAMES)
    a, b = rng.sample(names, 2)
    major = rng.randint(1, 9)
    slots = {"a": a, "b": b, "k": rng.choice(topic.keywords), "n": rng.choice(FACT_NOUNS),
             "ns": rng.choice(FACT_PURPOSES), "K": rng.choice(topic.tech), "day": rng.choice(DISTINCT_DAYS),
             "v": f"v{major}", "w": f"v{major + rng.randint(1, 3)}"}
    base: dict[str, Any] = {"type": "fact", "tags": [slots["k"]]}
    if rng.random() < 0.7:
        base.update(scope="project", project=rng.choice(PROJECTS))
    else:
        base["scope"] = "global"
    older, newer = (form[0].format(**slots), form[1].format(**slots))
    return ({**base, "title": older.rstrip("."), "body": older + "\n"},
            {**base, "title": newer.rstrip("."), "body": newer + "\n"})


# Families of (older, newer) pairs planted beside the near-duplicates and reversals.  Identifier families:
# two facts about different things named by an identifier in the subject (a customer, a rack, a ticket, a
# version, a host, a rule number, a dated release; two services on their own ports): never merged or
# superseded.  Clause families: the newer says all the older does and one thing more (an exception, an
# instruction, a number); a merge must keep what only the newer says, and neither supersedes the other.
# Value families: the same subject with another value in the predicate (a port, a host): the newer
# supersedes the older, like the "value" reversals.
IDENTIFIER_FAMILIES = ("customer", "rack", "ticket", "version", "host", "rule", "release", "service-port")
CLAUSE_FAMILIES = ("exception", "instruction", "limit")
VALUE_FAMILIES = ("value-port", "value-host")
FAMILIES = IDENTIFIER_FAMILIES + CLAUSE_FAMILIES + VALUE_FAMILIES
PLANS = ("Enterprise", "Team", "Starter", "Business", "Pro")
ENVIRONMENTS = ("Staging", "The preview cluster", "The load test rig", "The demo environment", "QA")
SIZES = ("small", "medium", "large")


def family_pair(generator: Generator, family: str, index: int, attempt: int = 0
                ) -> tuple[dict[str, Any], dict[str, Any], tuple[str, ...]]:
    """(older, newer, subjects) of one planted family (see FAMILIES): short facts that share most words.

    Identifiers are unique across the pairs of a family (pair ``index // len(FAMILIES)`` draws from its own
    range), and ``subjects`` names what the pair's facts are about where words name it, so no two pairs are
    about the same customer, rack or service by chance: that would be a true value change, not a distinct fact.
    """
    rng = random.Random(f"family:{family}:{generator.seed}:{index}:{attempt}")
    slot = index // len(FAMILIES)
    topic = rng.choice(generator.topics)
    k, k2 = rng.sample(topic.keywords, 2)
    n, ns, tech = rng.choice(FACT_NOUNS), rng.choice(FACT_PURPOSES), rng.choice(topic.tech)
    a, b = 1000 + 40 * slot + rng.randint(0, 19), 1020 + 40 * slot + rng.randint(0, 19)
    low_a, low_b = 2 * slot + 1, 2 * slot + 2
    port_a, port_b = 3000 + 40 * slot + rng.randint(0, 19), 3020 + 40 * slot + rng.randint(0, 19)
    if rng.random() < 0.5:
        a, b, low_a, low_b, port_a, port_b = b, a, low_b, low_a, port_b, port_a
    month, year = rng.choice(MONTHS), rng.randint(2026, 2030)
    forms: dict[str, tuple[str, str]] = {
        "customer": (f"Customer {a} is on the {{p}} plan.", f"Customer {b} is on the {{p}} plan."),
        "rack": (f"Server rack {low_a} is in room B{low_a + 10}.", f"Server rack {low_b} is in room B{low_a + 10}."),
        "ticket": (f"Ticket {k[:3].upper()}-{a} is assigned to the {k2} team.",
                   f"Ticket {k[:3].upper()}-{b} is assigned to the {k2} team."),
        "version": (f"{tech} 3.{low_a} reaches end of life in {month} {year} for the {k} {n}.",
                    f"{tech} 3.{low_b} reaches end of life in {month} {year} for the {k} {n}."),
        "host": (f"{k}-{low_a}.internal serves the {k2} {ns} API.", f"{k}-{low_b}.internal serves the {k2} {ns} API."),
        "rule": (f"Important rule number {low_a}: the service {low_a} must always log {ns} to {tech}.",
                 f"Important rule number {low_b}: the service {low_b} must always log {ns} to {tech}."),
        "release": (f"The {year}-{low_a % 12 + 1:02d}-{low_a // 12 % 28 + 1:02d} release of the {k} {n} shipped "
                    f"the {ns} export.",
                    f"The {year}-{low_b % 12 + 1:02d}-{low_b // 12 % 28 + 1:02d} release of the {k} {n} shipped "
                    f"the {ns} export."),
        "service-port": (f"The {k} service listens on port {port_a}.", f"The {k2} service listens on port {port_b}."),
        "exception": (f"{{e}} uses the {{s}} instance size for the {k} {n}.",
                      f"{{e}} uses the {{s}} instance size for the {k} {n}, except during load tests when it must "
                      f"use {{s2}}."),
        "instruction": (f"The old {k} deploy script is obsolete.",
                        f"The old {k} deploy script is obsolete; always use make {k2}-deploy."),
        "limit": (f"The {k} {n} retries failed {ns} uploads.",
                  f"The {k} {n} retries failed {ns} uploads up to {low_a} times, then alerts {k2}."),
        "value-port": (f"The {k} {n} database is on port {port_a}.", f"The {k} {n} database is on port {port_b}."),
        "value-host": (f"The {k} {ns} API is served from {k2}-{low_a}.internal.",
                       f"The {k} {ns} API is served from {k2}-{low_b}.internal."),
    }
    s, s2 = rng.sample(SIZES, 2)
    slots = {"p": rng.choice(PLANS), "e": rng.choice(ENVIRONMENTS), "s": s, "s2": "x" + s2}
    older, newer = (text.format(**slots) for text in forms[family])
    if family != "host":  # a host name keeps its case
        older, newer = older[0].upper() + older[1:], newer[0].upper() + newer[1:]
    base: dict[str, Any] = {"type": "fact", "tags": [k]}
    if rng.random() < 0.7:
        base.update(scope="project", project=rng.choice(PROJECTS))
    else:
        base["scope"] = "global"
    subjects = {"service-port": (f"{k} service", f"{k2} service"), "value-port": (f"{k} {n} database",),
                "value-host": (f"{k} {ns} API",)}.get(family, ())
    return ({**base, "title": older.rstrip("."), "body": older + "\n"},
            {**base, "title": newer.rstrip("."), "body": newer + "\n"}, tuple(f"{family}:{s}" for s in subjects))


def _normalized(text: str) -> str:
    """Text as the import compares it for "the same text twice" (``vault_engine.format.memory.normalize_text``)."""
    return " ".join(unicodedata.normalize("NFKC", text.strip()).casefold().split())


def _stamp(moment: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))


PLANT_EPOCH = 1_735_689_600  # 2025-01-01T00:00:00Z: base memories are created during 2025
_DAY = 86_400


def plant(generator: Generator, size: int, duplicate_share: float = 0.10, contradictions: int | None = None,
          second_copy_share: float = 0.10, distinct: int = 0, families: int = 0) -> Planted:
    """``size`` records: base memories, ``duplicate_share`` of ``size`` near-duplicates, fact pairs.

    Every record is explicit with trust ``learned``; ``created`` and
    ``updated`` are set so each original is older than its duplicates and each
    contradicted fact older than the memory that reverses it.  Near-duplicates
    copy base (long prose) memories; ``second_copy_share`` of the originals get
    a second one; originals are of DUPLICATE_TYPES only.  Kinds follow
    DUPLICATE_SHARES and cycle through CONTRADICTION_KINDS.  ``distinct`` pairs of short notes about
    different things that share most words (:func:`distinct_pair`) must neither merge nor supersede.
    ``families`` pairs of each of FAMILIES (:func:`family_pair`): value families count as reversals.
    """
    pairs = size // 50 if contradictions is None else contradictions
    duplicates = round(size * duplicate_share)
    base = size - duplicates - 2 * pairs - 2 * distinct - 2 * families * len(FAMILIES)
    if base < 1 or duplicates > base:
        raise ValueError(f"{size} records cannot hold {duplicates} near-duplicates and {pairs} contradiction pairs")
    rng = random.Random(f"plant:{generator.seed}:{size}")

    def created(index: int) -> float:
        return PLANT_EPOCH + random.Random(f"created:{generator.seed}:{index}").uniform(0, 365 * _DAY)

    records = []
    born: dict[str, float] = {}
    memories: dict[int, SyntheticMemory] = {}
    for index in range(base):
        memory = generator.memory(index)
        memories[index] = memory
        born[memory.id] = created(index)
        stamp = _stamp(born[memory.id])
        records.append({**memory.record, "authority": "explicit", "trust": "learned", "created": stamp,
                        "updated": stamp})
    second = round(duplicates * second_copy_share)
    eligible = [index for index in range(base) if memories[index].type in DUPLICATE_TYPES]
    if duplicates - second > len(eligible):
        raise ValueError(f"{base} base records hold only {len(eligible)} memories of a type that merges")
    originals = rng.sample(eligible, duplicates - second)
    originals += rng.sample(originals, second)
    kinds = [kind for kind, share in zip(DUPLICATE_KINDS, DUPLICATE_SHARES, strict=True)
             for _ in range(round(share * duplicates))]
    kinds = (kinds + [DUPLICATE_KINDS[-1]] * duplicates)[:duplicates]
    rng.shuffle(kinds)
    duplicate_of: dict[str, str] = {}
    duplicate_kind: dict[str, str] = {}
    texts: dict[str, set[str]] = {}  # original id -> its text and its duplicates' (as the import compares them)
    for number, (index, kind) in enumerate(zip(originals, kinds, strict=True)):
        original = memories[index]
        dup_rng = random.Random(f"duplicate:{generator.seed}:{size}:{number}")
        taken = texts.setdefault(original.id, {_normalized(original.record["body"])})
        for _ in range(10):  # the import would fold a second copy with the same text into the first
            record = near_duplicate(original, kind, dup_rng)
            if _normalized(record["body"]) not in taken:
                break
        else:
            raise RuntimeError(f"no distinct {kind} copy of {original.id}")
        taken.add(_normalized(record["body"]))
        record["id"] = generator.memory_id(10_000_000 + number)
        moment = born[original.id] + dup_rng.uniform(1, 120) * _DAY + number  # later than the original
        born[record["id"]] = moment
        record.update(authority="explicit", trust="learned", created=_stamp(moment), updated=_stamp(moment))
        records.append(record)
        duplicate_of[record["id"]] = original.id
        duplicate_kind[record["id"]] = kind
    supersedes: dict[str, str] = {}
    contradiction_kind: dict[str, str] = {}
    for number in range(pairs):
        kind = CONTRADICTION_KINDS[number % len(CONTRADICTION_KINDS)]
        older, newer = fact_pair(generator, number, kind)
        pair_rng = random.Random(f"fact-time:{generator.seed}:{number}")
        first = PLANT_EPOCH + pair_rng.uniform(0, 300 * _DAY)
        then = first + pair_rng.uniform(3, 150) * _DAY
        older["id"] = generator.memory_id(20_000_000 + 2 * number)
        newer["id"] = generator.memory_id(20_000_000 + 2 * number + 1)
        for record, moment in ((older, first), (newer, then)):
            record.update(authority="explicit", trust="learned", created=_stamp(moment), updated=_stamp(moment))
            records.append(record)
        supersedes[newer["id"]] = older["id"]
        contradiction_kind[newer["id"]] = kind
    distinct_of: dict[str, str] = {}
    for number in range(distinct):
        older, newer = distinct_pair(generator, number)
        pair_rng = random.Random(f"distinct-time:{generator.seed}:{number}")
        first = PLANT_EPOCH + pair_rng.uniform(0, 300 * _DAY)
        then = first + pair_rng.uniform(1, 90) * _DAY
        older["id"] = generator.memory_id(30_000_000 + 2 * number)
        newer["id"] = generator.memory_id(30_000_000 + 2 * number + 1)
        for record, moment in ((older, first), (newer, then)):
            record.update(authority="explicit", trust="learned", created=_stamp(moment), updated=_stamp(moment))
            records.append(record)
        distinct_of[newer["id"]] = older["id"]
    family_of: dict[str, str] = {}
    family_pairs: dict[str, str] = {}
    taken = {_normalized(r["body"]) for r in records}
    for number in range(families * len(FAMILIES)):
        family = FAMILIES[number % len(FAMILIES)]
        for attempt in range(50):  # the import folds a text it already holds into the first copy
            older, newer, subjects = family_pair(generator, family, number, attempt)
            if not {_normalized(older["body"]), _normalized(newer["body"]), *subjects} & taken:
                break
        taken.update((_normalized(older["body"]), _normalized(newer["body"]), *subjects))
        pair_rng = random.Random(f"family-time:{generator.seed}:{number}")
        first = PLANT_EPOCH + pair_rng.uniform(0, 300 * _DAY)
        then = first + pair_rng.uniform(1, 90) * _DAY
        older["id"] = generator.memory_id(40_000_000 + 2 * number)
        newer["id"] = generator.memory_id(40_000_000 + 2 * number + 1)
        for record, moment in ((older, first), (newer, then)):
            record.update(authority="explicit", trust="learned", created=_stamp(moment), updated=_stamp(moment))
            records.append(record)
            family_of[record["id"]] = family
        family_pairs[newer["id"]] = older["id"]
        if family in VALUE_FAMILIES:
            supersedes[newer["id"]] = older["id"]
            contradiction_kind[newer["id"]] = family
    return Planted(records, base, duplicate_of, duplicate_kind, supersedes, contradiction_kind,
                   frozenset(duplicate_of.values()), frozenset(supersedes.values()), distinct_of, family_of,
                   family_pairs)


if __name__ == "__main__":  # print a few records: python -m stress.synthetic [COUNT] [SEED]
    import sys

    how_many = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    chosen_seed = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    for line in jsonl(Generator(chosen_seed).memories(how_many)):
        print(line)
