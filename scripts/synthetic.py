"""Deterministic synthetic memories for benchmarks.

Records read like the notes an agent keeps: English-like prose built from
sentence templates over ~2,000 common English words and technical terms, each
memory about one of a few hundred topics (so related memories share words and
queries have answers), a mix of types, ~20% with a trigger, ~70% in one of 20
projects, and a few rare exact tokens (``E4821``, ``ERR_CONN_RESET``).

Record ``i`` of seed ``s`` is always the same (its own seeded RNG), so a
benchmark can rebuild any record, or a query about it, without a vault.

    from synthetic import Generator, write_vault
    gen = Generator(seed=7)
    lines = [json.dumps(m.record) for m in gen.memories(1000)]
    write_vault(Vault(root), gen, 10_000)
"""

from __future__ import annotations

import itertools
import json
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

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

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
_BASE_MS = 1_700_000_000_000
TOPICS = 400


def _unique(words: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(words))


def _encode(value: int, length: int) -> str:
    return "".join(_ALPHABET[(value >> (5 * n)) & 31] for n in reversed(range(length)))


def _plural(noun: str) -> str:
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and noun[-2:-1] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + "s"


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
            return _plural(self.draw("n"))
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
    from vault_engine.index.vectors import VectorRow, VectorStore
    from vault_engine.sync import embedding_texts, text_fingerprint

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
    """(texts, tokens) that embedding every memory takes, each text cut at ``window`` tokens as the model does."""
    from vault_engine import store
    from vault_engine.errors import MemoryFileError
    from vault_engine.sync import embedding_texts

    tokenizer = embedder._token_tool()  # type: ignore[attr-defined]
    texts_total = tokens = 0
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
        pending += [text for _, _, text in embedding_texts(memory, embedder)]
        if len(pending) >= batch:
            texts_total += len(pending)
            tokens += flush()
            pending = []
    if pending:
        texts_total += len(pending)
        tokens += flush()
    return texts_total, tokens


if __name__ == "__main__":  # print a few records: python scripts/synthetic.py [COUNT] [SEED]
    import sys

    how_many = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    chosen_seed = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    for line in jsonl(Generator(chosen_seed).memories(how_many)):
        print(line)
