"""Secret redaction: API keys, tokens, passwords and private keys never reach a file.

A secret is recognised by one of three kinds of evidence, in this order:

1. **its own shape**: private key blocks (also cut short, or without their BEGIN line), JWTs,
   and tokens whose provider gives them a prefix (``ghp_``, ``glpat-``, ``sk_live_``, ``AKIA``,
   ``xoxb-``, ``hf_``, ...);
2. **where it stands**: the password of a URL (``redis://:pw@host``), the credentials of an
   ``Authorization`` header, a webhook's path, ``AccountKey=`` of a connection string,
   ``sig=`` of a signed URL, ``curl -u user:pw``, a token before a URL's ``@``;
3. **what it is called**: a value given to a name that says it is secret (``db_password: ...``,
   ``"SecretAccessKey": "..."``, ``export SECRET_TOKEN=...``, ``--password ...``), or named so
   in prose (``the password is ...``), unless the value is a reference (``${DB_PASSWORD}``,
   ``os.environ[...]``, ``self.password``), a placeholder, a path or a URL without credentials,
   or the name says it is about the secret rather than the secret (``token_url``, ``max_tokens``).
   After a password's name any value counts, letters only too (``password: yDIfIZwXeozL``; in
   prose, any but a plain lowercase word); after another secret's name only a value that looks
   generated (:func:`_generated`: ``the token is walrus-c1-111`` is a name with numbers).

Hashes, UUIDs, commit ids, base64 data, ids and paths have no such evidence and are left
alone: ``benchmarks/secret_detection.py`` measures every kind and look-alike (docs/reliability.md).
Redaction is idempotent, and pure: plain regular expressions, no I/O, safe in any thread.
The boundary that calls it (the store's writes and file names, the journal's append) is
described in docs/development.md.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .value import Memory

REDACTED = "[REDACTED]"


class _Regex:
    """A regular expression compiled when first used: importing memvault (``memvault --help``) compiles none."""

    __slots__ = ("_compiled", "flags", "pattern")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern, self.flags = pattern, flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:  # two threads may both compile it: the same pattern either way
            self._compiled = re.compile(self.pattern, self.flags)
        return self._compiled


# ---------------------------------------------------------------- 1. the secret's own shape

# The block to its END line; a block cut short (``head``, a truncated tool output) to the end of
# its base64 lines (real newlines, or ``\n`` escaped in JSON).
_PRIVATE_KEY = _Regex(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
    r"(?:(?:(?!-----BEGIN )[\s\S]){0,20000}?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
    r"|(?:(?:\s+|\\n)(?:[A-Za-z0-9+/=]{8,}|[A-Za-z-]+: ?[^\n\\]*)?)+)")

_B = r"(?<![A-Za-z0-9_-])"  # a token starts after no token character
_E = r"(?![A-Za-z0-9_-])"  # and ends before none
_TOKENS = [
    r"sk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}",  # Anthropic, OpenAI (random-looking: checked below)
    r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}",  # AWS access key ids
    r"gh[pousr]_[A-Za-z0-9]{36,255}", r"github_pat_[A-Za-z0-9_]{22,255}",  # GitHub
    r"gl(?:pat|dt|rt|cbt|ptt|ft|soat|agent)-[A-Za-z0-9_-]{20,}",  # GitLab
    r"xox[abposre]-[A-Za-z0-9-]{10,}", r"xapp-\d-[A-Za-z0-9-]{20,}",  # Slack
    r"[sr]k_(?:live|test)_[A-Za-z0-9]{16,}", r"whsec_[A-Za-z0-9+/=]{24,}",  # Stripe
    r"AIza[0-9A-Za-z_-]{35}", r"GOCSPX-[A-Za-z0-9_-]{20,}", r"ya29\.[A-Za-z0-9_-]{20,}",  # Google
    r"hf_[A-Za-z0-9]{30,}",  # Hugging Face
    r"npm_[A-Za-z0-9]{36}",  # npm
    r"pypi-AgE[A-Za-z0-9_-]{50,}",  # PyPI
    r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}",  # SendGrid
    r"SK[0-9a-fA-F]{32}",  # Twilio API keys
    r"do[por]_v1_[a-f0-9]{64}",  # DigitalOcean
    r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",  # Shopify
    r"key-[0-9a-f]{32}",  # Mailgun
    r"sq0(?:csp|atp)-[A-Za-z0-9_-]{22,}",  # Square
    r"AKCp[A-Za-z0-9]{60,}",  # JFrog Artifactory
    r"dapi[0-9a-f]{32}(?:-[0-9])?",  # Databricks
    r"hv[sbr]\.[A-Za-z0-9_-]{24,}",  # HashiCorp Vault
    r"AGE-SECRET-KEY-1[0-9A-Z]{58}",  # age
    r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}", r"glc_[A-Za-z0-9+/]{32,}={0,2}",  # Grafana
    r"NRAK-[A-Z0-9]{27}",  # New Relic
    r"lin_api_[A-Za-z0-9]{40}",  # Linear
    r"pul-[a-f0-9]{40}",  # Pulumi
    r"dp\.(?:st|ct|pt|sa|scim|audit)\.(?:[a-z0-9_-]{1,40}\.)?[A-Za-z0-9_-]{40,}",  # Doppler
    r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}",  # Postman
    r"[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}",  # Discord bots
    r"eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",  # JWTs
    r"(?:IQoJb3JpZ2luX2Vj|FwoGZXIvYXdzE)[A-Za-z0-9+/=]{60,}",  # AWS session tokens
    # RSA private keys in DER, base64, without their BEGIN line (PKCS#1, PKCS#8)
    r"MII[A-Za-z0-9+/]{3}IBA(?:AKC|DANBgkqhkiG9w0BAQEFAASC)[A-Za-z0-9+/=]{40,}",
]
# Every prefix above starts with one of these: the engine skips other positions at once.
_TOKEN = _Regex(_B + "(?=[sAgxrwGyhnpSdkNlPMOeIF])(?:" + "|".join(_TOKENS) + ")" + _E)
# Tokens with no prefix of their own, found after a cheap test for what they hold.
_HINTED_TOKENS = [
    (".atlasv1.", _Regex(_B + r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_-]{60,}" + _E)),  # Terraform Cloud
    ("-us", _Regex(_B + r"[0-9a-f]{32}-us[0-9]{1,2}" + _E)),  # Mailchimp
]

# ---------------------------------------------------------------- 2. where it stands

_VALUE = r"[A-Za-z0-9._~+/=%-]"  # the characters of a credential in a header or URL
# (what a text holding it holds, lower-cased; the pattern; what its group 1 must be): "placed" anything
# but a placeholder (user:pass@, ${PASSWORD}); "credential" also random-looking (Authorization: Bearer
# YOUR_TOKEN is not one); "generated" letters and digits that are not an identifier's words.
_PLACED = [
    # user:password@ in a URL (the user may be empty: redis://:pw@host)
    ("://", _Regex(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@'\"`\[\]]*:([^/\s@'\"`\[\]]+)@"), "placed"),
    # a token alone before the @ of a URL (https://<token>@github.com)
    ("://", _Regex(r"\b[A-Za-z][A-Za-z0-9+.-]*://([A-Za-z0-9_-]{20,})@"), "generated"),
    # Authorization: <scheme> <credentials>, whatever the scheme (Bearer, Basic, token, SSWS, ...)
    ("authorization", _Regex(r"(?i)\bauthorization[\"']?\s*[:=]\s*[\"']?(?:[A-Za-z-]+\s+)?(" + _VALUE + r"{8,})"),
     "credential"),
    ("bearer", _Regex(r"(?i)\bbearer\s+(" + _VALUE + r"{16,})"), "generated"),
    ("hooks.slack.com", _Regex(r"hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9_/-]{20,})"), "placed"),
    ("/api/webhooks/", _Regex(r"discord(?:app)?\.com/api/webhooks/([0-9]+/[A-Za-z0-9_-]{20,})"), "placed"),
    ("key=", _Regex(r"(?i)\b(?:AccountKey|SharedAccessKey)=([^;\s'\"`]{16,})"), "placed"),
    ("sig=", _Regex(r"[?&]sig=([A-Za-z0-9%+/=_-]{16,})"), "placed"),  # Azure shared access signatures
    (":aa", _Regex(r"(?<![0-9])([0-9]{8,10}:AA[A-Za-z0-9_-]{33})(?![A-Za-z0-9_-])"), "placed"),  # Telegram: bot<token>
    ("-u", _Regex(r"(?:^|\s)(?:-u|--user)[\s=]+['\"]?[^\s:'\"]+:([^\s'\"]+)"), "placed"),  # curl -u user:password
]
_PLACEHOLDERS = frozenset({"pass", "password", "passwd", "pwd", "pw", "secret", "token", "xxx", "xxxx"})

# ---------------------------------------------------------------- 3. what it is called

# A name, maybe quoted, then = : := => or ==, then a value, maybe quoted.  The value is looked
# at, not taken: it may be a name itself (``note: DB_PASSWORD=...``), and the search goes on there.
_ASSIGNMENT = _Regex(
    r"(?P<name>\"[^\"\n]{1,80}\"|'[^'\n]{1,80}'|(?<![\w.-])[A-Za-z_][\w.-]{0,79})"
    r"\s*(?:\]\s*)?(?::=|=>|==?|:)[ \t]*"
    r"(?=(?P<value>\"[^\"\n]*\"|'[^'\n]*'|`[^`\n]*`|[^\s'\"`]+))")
# A command-line option: --password VALUE, --api-key=VALUE.
_OPTION = _Regex(r"(?<![\w-])--(?P<name>[A-Za-z][\w-]{1,60})(?:=|[ \t]+)"
                 r"(?=(?P<value>\"[^\"\n]*\"|'[^'\n]*'|[^\s'\"`-][^\s'\"`]*))")
# Prose and netrc: "the password is VALUE", "login deploy password VALUE".
_PROSE = _Regex(
    r"(?i)\b(?:(?P<password>password|passphrase|passcode|passwd|pwd)(?:\s+(?:is|was|of|to|as|=|:))?"
    r"|(?:token|secret|(?:api|access|secret|secret access|private|signing|encryption|master)\s+key)"
    r"\s+(?:is|was|=|:))"
    r"\s+[\"'`]?(?P<value>[^\s\"'`]{8,})")

_SECRET_WORDS = frozenset({
    "password", "passwd", "passwort", "pwd", "passphrase", "passcode", "secret", "token",
    "apikey", "credential", "credentials", "sas",
})
# Two words in a row that name a key (``api_key``, ``SecretAccessKey`` has "secret" already).
_KEY_PAIRS = frozenset({
    ("api", "key"), ("access", "key"), ("private", "key"), ("account", "key"), ("app", "key"), ("auth", "key"),
    ("client", "key"), ("signing", "key"), ("encryption", "key"), ("master", "key"), ("storage", "key"),
    ("service", "key"), ("license", "key"), ("session", "key"), ("api", "token"), ("auth", "token"),
    ("ssh", "key"), ("deploy", "key"),
})
# A last word saying the name is about the secret, not the secret (``token_url``, ``password_min_length``).
_ABOUT = frozenset({
    "url", "uri", "urls", "endpoint", "host", "hostname", "port", "path", "file", "files", "dir", "folder",
    "length", "len", "count", "size", "ttl", "timeout", "expiry", "expires", "expiration", "exp", "lifetime",
    "policy", "type", "types", "name", "names", "hint", "label", "field", "header", "prompt", "min", "max",
    "enabled", "disabled", "required", "rotation", "format", "limit", "strength", "version", "digest",
    "algorithm", "alg", "method", "mode", "env", "var", "ref", "arn", "location", "store", "provider",
    "manager", "source", "kind", "scope", "scopes", "usage", "reset", "changed", "at", "date", "time",
    "created", "updated", "regex", "pattern", "rules", "placeholder", "help", "description", "text",
    "message", "error", "title", "command", "cmd", "helper", "hash", "sha", "checksum", "fingerprint",
    "encoding",
})
_COUNTING = frozenset({"max", "min", "num", "n", "total", "count", "len"})  # max_tokens, num_tokens
_WORDS = _Regex(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_REFERENCE = _Regex(
    r"^[$%<][({A-Za-z_]|\{\{|#\{|@\{|(?:os\.environ|os\.getenv|process\.env|getenv|ENV\[|env\()"
    r"|^[A-Za-z_$#][A-Za-z_$#]*(?:[?!]?\.[A-Za-z_$#][A-Za-z_$#]*)+$"  # self.password, settings.API_KEY, a?.b
    r"|^0x[0-9a-fA-F]+$|^[(\[{]"  # a constant or an expression in code
    r"|^[A-Za-z_$][\w.$?!#]*\s*[(\[]"  # get_password(), request.form["password"]
    r"|(?-i:^[A-Z][A-Z_]*$)"  # YOUR_CLIENT_SECRET, DB_PASSWORD: a placeholder or a variable's name (not yDIfIZwX)
    r"|^[*xX•#.-]+$"  # ******** or xxxxxxxx: masked already
    r"|^(?:null|none|nil|true|false|yes|no|undefined|required|optional|empty|redacted)$", re.I)
_TYPES = frozenset({"string", "secretstr", "optional", "unicode", "varchar", "bytestring", "nullable"})
_GENERATED = _Regex(r"[A-Za-z0-9+/=_.~%:-]+")  # the alphabet of generated secrets (base64, hex, ...)
_URL = _Regex(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_PATH = _Regex(r"^(?:~|\.{1,2})?(?:/[\w.@+-]+)+/?$|^[A-Za-z]:\\")
_TRAILING = ",;:)]}>*…"  # after an unquoted value: punctuation, a glob, the ellipsis of a cut text


def _name_words(name: str) -> list[str]:
    return [word.lower() for word in _WORDS.compiled.findall(name.strip("\"'"))]


def _secret_name(name: str) -> bool:
    """Whether a name says its value is a secret (and not something about one)."""
    words = [word for word in _name_words(name) if not word.isdigit()]  # secret_sha256: "sha" last
    if not words or words[-1] in _ABOUT or words[0] in _COUNTING or "public" in words or "publishable" in words:
        return False
    if any(word in _SECRET_WORDS for word in words):
        return True
    if words[-1] == "auth" or (words[-1] == "pass" and len(words) > 1):  # docker's "auth"; DB_PASS, not "pass"
        return True
    return any(pair in _KEY_PAIRS for pair in itertools.pairwise(words))


def _password_name(name: str) -> bool:
    words = _name_words(name)
    return any(word.startswith(("passw", "passp", "passc", "pwd")) for word in words) or words[-1:] == ["pass"]


def _random_looking(value: str, *, loose: bool = False) -> bool:
    """A generated value: letters and digits both (a word or a number alone is not one); ``loose``:
    or long and of mixed case past its first letter (base64 without a digit)."""
    if any(c.isdigit() for c in value) and any(c.isalpha() for c in value):
        return True
    rest = value[1:]
    return loose and len(value) >= 16 and any(c.isupper() for c in rest) and any(c.islower() for c in rest)


_PASSPHRASE = _Regex(r"[a-z0-9]+(?: [a-z0-9]+){3,}")  # diceware: four lowercase words or more


def _secret_value(value: str, *, short: bool = False, quoted: bool = False) -> bool:
    """Whether a value given to a secret name is a secret: not a reference, placeholder, path, URL.

    ``short``: the name is a password's; shorter values count, and so do passphrases of lowercase
    words (other text with spaces is a label: ``"password": "Enter your password"``).  ``quoted``:
    a string literal, whatever its characters (unquoted, only a token's alphabet: not code).
    """
    if REDACTED in value or len(value) < (6 if short else 8) or not value.isascii():
        return False
    if any(c.isspace() for c in value):
        return short and bool(_PASSPHRASE.compiled.fullmatch(value))
    if value.isalpha() and (len(value) < 8 or value.lower() in _TYPES):
        return False  # password: string
    if _REFERENCE.compiled.search(value) or _PATH.compiled.match(value):
        return False
    if _URL.compiled.match(value):
        return False  # a URL's own password is redacted by its place; the URL is not a secret
    # A password may be any text; another secret is generated: letters and digits both, from a
    # token's alphabet, not words (previousToken2, type2.declaration.readonlyToken).
    return short or (_random_looking(value) and (quoted or bool(_GENERATED.compiled.fullmatch(value)))
                     and not _wordish(value) and _generated(value))


_MIXED_RUN = _Regex(r"[A-Za-z0-9]{6,}")


def _generated(value: str) -> bool:
    """Whether a value of letters and digits reads as generated rather than as a name with a number:
    20 characters or more, or one run of at least 6 letters and digits that mixes letters with
    digits or lower with upper case (``x7Kq9pLm2v``; not ``walrus-c1-111``, ``build-2024-rc1``)."""
    if len(value) >= 20:
        return True
    for run in _MIXED_RUN.compiled.findall(value):
        letters = [c for c in run if c.isalpha()]
        if letters and (len(letters) < len(run) or (any(c.isupper() for c in run[1:])
                                                     and any(c.islower() for c in run))):
            return True
    return False


def _wordish(value: str) -> bool:
    """An identifier made of words: ``previousToken2``, ``Ed25519PrivateKey``, ``v4auth_header``,
    ``type2.declaration.readonlyToken`` (a generated value has many short runs of letters and digits)."""
    parts = _WORDS.compiled.findall(value)
    words = [part for part in parts if part.isalpha()]
    if len(parts) - len(words) <= 1 and all(len(word) >= 2 for word in words) and any(len(w) >= 4 for w in words):
        return True
    for separator in "._":
        pieces = value.split(separator)
        if len(pieces) > 1 and any(len(piece) >= 4 and piece.isalpha() and piece.islower() for piece in pieces) and (
                separator == "." or all(piece.islower() or piece.isdigit() for piece in pieces if piece)):
            return True
    return False


def _placed_value(value: str, need: str) -> bool:
    """Whether a value in a secret's place (see :data:`_PLACED`) is what ``need`` asks."""
    if REDACTED in value or value.lower() in _PLACEHOLDERS or _REFERENCE.compiled.search(value):
        return False
    if need == "credential":
        return _random_looking(value, loose=True)
    return need == "placed" or (_random_looking(value) and not _wordish(value))


def _unquote(raw: str) -> tuple[str, int, int]:
    """The value inside its quotes, and where it starts and ends within ``raw``."""
    if len(raw) >= 2 and raw[0] in "\"'`" and raw[-1] == raw[0]:
        return raw[1:-1], 1, len(raw) - 1
    end = len(raw)
    while end > 0 and raw[end - 1] in _TRAILING:
        end -= 1
    return raw[:end], 0, end


class _Counter:
    def __init__(self) -> None:
        self.count = 0

    def replace(self, match: re.Match[str], group: int | str, start: int = 0, end: int | None = None) -> str:
        """The match with the part ``[start:end]`` of ``group`` replaced by :data:`REDACTED`."""
        whole, base = match.group(0), match.start(0)
        begin = match.start(group) + start
        stop = match.start(group) + (end if end is not None else len(match.group(group)))
        if whole[begin - base:stop - base] == REDACTED:
            return whole
        self.count += 1
        return whole[:begin - base] + REDACTED + whole[stop - base:]


def _sub(pattern: _Regex, text: str, decide: Callable[[re.Match[str]], str]) -> str:
    compiled = pattern.compiled
    return compiled.sub(decide, text) if compiled.search(text) else text


def _values(pattern: _Regex, text: str, decide: Callable[[re.Match[str]], tuple[int, int] | None],
            counter: _Counter) -> str:
    """``text`` with the span ``decide`` picks in each match of ``pattern`` redacted (a span inside
    one already taken is left to it)."""
    parts: list[str] = []
    last = 0
    for match in pattern.compiled.finditer(text):
        span = decide(match)
        if span is None or span[0] < last or text[span[0]:span[1]] == REDACTED:
            continue
        parts += [text[last:span[0]], REDACTED]
        last = span[1]
        counter.count += 1
    return "".join(parts) + text[last:] if parts else text


_HINT = _Regex(r"pass|pwd|secret|token|key|auth|credential|sas")  # in any secret name (lower-cased)


def redact_counted(text: str) -> tuple[str, int]:
    """``text`` with every recognised secret replaced by ``[REDACTED]``, and how many were replaced."""
    counter = _Counter()
    lower = text.lower()  # each rule runs only when the text holds what its matches hold
    if "private key" in lower:
        text = _sub(_PRIVATE_KEY, text, lambda m: counter.replace(m, 0))

    def token(match: re.Match[str]) -> str:
        value = match.group(0)
        if value.startswith("sk-") and not value.startswith("sk-ant-") and not (
                _random_looking(value[3:]) and any(c.isupper() for c in value)):
            return value  # sk-learn-compatible, not a key (sk-ant- is Anthropic's alone)
        return counter.replace(match, 0)

    text = _sub(_TOKEN, text, token)
    for hint, pattern in _HINTED_TOKENS:
        if hint in lower:
            text = _sub(pattern, text, lambda m: counter.replace(m, 0))
    for hint, pattern, need in _PLACED:
        if hint not in lower:
            continue

        def placed(match: re.Match[str], need: str = need) -> str:
            if not _placed_value(match.group(1), need):
                return match.group(0)
            return counter.replace(match, 1)

        text = _sub(pattern, text, placed)
    if not _HINT.compiled.search(lower):
        return text, counter.count

    def named(match: re.Match[str]) -> tuple[int, int] | None:
        if not _secret_name(match.group("name")):
            return None
        value, start, end = _unquote(match.group("value"))
        if not _secret_value(value, short=_password_name(match.group("name")), quoted=start == 1):
            return None
        return match.start("value") + start, match.start("value") + end

    def prose(match: re.Match[str]) -> tuple[int, int] | None:
        value, start, end = _unquote(match.group("value"))
        if match.group("password"):  # any value but a plain word: "the password is yDIfIZwXeozL"
            if (value.isalpha() and value.islower()) or not _secret_value(value, short=True):
                return None
        elif not _random_looking(value) or not _secret_value(value):
            return None
        return match.start("value") + start, match.start("value") + end

    # A name and its value are on one line: only the lines naming a secret are read closely.
    lines = text.split("\n")
    for number, line in enumerate(lines):
        if _HINT.compiled.search(line.lower()):
            line = _values(_ASSIGNMENT, line, named, counter)
            if "--" in line:
                line = _values(_OPTION, line, named, counter)
            lines[number] = _values(_PROSE, line, prose, counter)
    return "\n".join(lines), counter.count


def redact(text: str) -> str:
    """``text`` with every recognised secret replaced by ``[REDACTED]``."""
    return redact_counted(text)[0]


def redact_data(value: Any) -> Any:
    """``value`` with every text in it (list items, mapping keys and values, at any depth) redacted."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, (list, tuple)):
        return type(value)(redact_data(item) for item in value)
    if isinstance(value, dict):
        return {redact_data(key): redact_data(item) for key, item in value.items()}
    return value


def holds_secret(text: str) -> bool:
    """Whether ``text`` holds anything :func:`redact` would replace."""
    return redact_counted(text)[1] > 0


# Every field of a memory a person or a model writes (ids, dates and closed vocabularies aside).
MEMORY_TEXT_FIELDS = ("title", "body", "project", "paths", "tasks", "operations", "phases", "summary", "trigger",
                      "tags", "links", "source", "sender", "evidence", "trashed_from", "extra")


def redact_memory(memory: Memory) -> Memory:
    """``memory`` with every text field redacted (the same object when there was nothing to redact)."""
    changes = {}
    for name in MEMORY_TEXT_FIELDS:
        value = getattr(memory, name)
        if value:
            clean = redact_data(value)
            if clean != value:
                changes[name] = clean
    return memory.replace(**changes) if changes else memory
