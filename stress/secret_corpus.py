"""The secrets corpus: kinds of secret in realistic surroundings, and ordinary text that looks like one.

- :data:`KINDS`: 78 kinds of secret (167 samples), each a realistic fake value (drawn from the
  kind's own alphabet and length, seeded) in two or three realistic surroundings: config lines,
  env exports, URLs, JSON, HTTP headers, command lines and prose;
- :data:`LOOKALIKES`: 16 classes of ordinary text (123 samples) that look like a secret: sha1,
  sha256 and md5 hashes, UUIDs, git commit ids, base64 data, public keys, long identifiers,
  version strings, file paths, memvault ids and digests, URLs without credentials, secret words
  with ordinary values, code and config around secrets, IP addresses, numbers and dates.

A sample of a kind counts as redacted when no 10 characters in a row of its secret are left
(:func:`leaked`); a look-alike sample is a false positive when redaction changes it at all.
``python -m benchmarks.secret_detection`` measures memvault's redaction on it (against
detect-secrets); ``python -m stress.secret_paths`` and the tests push it through the vault.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass

S = "§"  # where a sample's secret goes
WINDOW = 10  # a sample leaks when this many characters in a row of its secret are left

ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "-_"
B64 = ALNUM + "+/"
HEX = "0123456789abcdef"
UPPER = string.ascii_uppercase + string.digits
CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"


def _rng(name: str) -> random.Random:
    return random.Random(f"eval-secrets/{name}")  # one stream per kind: adding a kind moves no other


def _draw(r: random.Random, alphabet: str, n: int) -> str:
    return "".join(r.choice(alphabet) for _ in range(n))


def _password(r: random.Random, n: int = 18, symbols: str = "!#%^*-_+=.~") -> str:
    """A generated password: letters, digits and a few symbols, each class present."""
    while True:
        value = _draw(r, ALNUM + symbols, n)
        if (any(c.isdigit() for c in value) and any(c.isupper() for c in value)
                and any(c.islower() for c in value) and value[0].isalnum()):
            return value


def _b64(r: random.Random, nbytes: int, alphabet: str = B64) -> str:
    raw = bytes(r.randrange(256) for _ in range(nbytes))
    text = base64.b64encode(raw).decode()
    return text if alphabet == B64 else text.replace("+", "-").replace("/", "_").rstrip("=")


def _pem_lines(r: random.Random, lines: int, first: str = "") -> list[str]:
    body = first + _b64(r, 48 * lines)
    return [body[i:i + 64] for i in range(0, 64 * lines, 64)]


@dataclass(frozen=True)
class Sample:
    """One text holding one secret (or, for a look-alike, none)."""

    group: str  # the kind of secret, or the look-alike class
    text: str
    secret: str = ""  # what must not survive redaction ("" for look-alikes)


PUBLIC: dict[str, str] = {}  # each kind's public prefix (``AGE-SECRET-KEY-1``): the same in every secret of it


def _kinds() -> dict[str, tuple[str, tuple[str, ...]]]:
    out: dict[str, tuple[str, tuple[str, ...]]] = {}

    def kind(name: str, make: Callable[[random.Random], str], *texts: str) -> None:
        out[name] = (make(_rng(name)), texts)
        secret, other = out[name][0], make(_rng(name + "/other"))
        same = 0
        while same < min(len(secret), len(other)) and secret[same] == other[same]:
            same += 1
        PUBLIC[name] = secret[:same]

    kind("anthropic api key", lambda r: "sk-ant-api03-" + _draw(r, URLSAFE, 93) + "AA",
         f"export ANTHROPIC_API_KEY={S}",
         f'client = anthropic.Anthropic(api_key="{S}")',
         f"I put the new key {S} into the CI settings yesterday.")
    kind("openai project key", lambda r: "sk-proj-" + _draw(r, URLSAFE, 74) + "T3BlbkFJ" + _draw(r, URLSAFE, 74),
         f'OPENAI_API_KEY="{S}"',
         f'{{"openai": {{"key": "{S}", "model": "gpt-4o"}}}}')
    kind("openai legacy key", lambda r: "sk-" + _draw(r, ALNUM, 20) + "T3BlbkFJ" + _draw(r, ALNUM, 20),
         f"the old key was {S} (revoked in March)",
         f"openai.api_key = '{S}'")
    kind("aws access key id", lambda r: "AKIA" + _draw(r, UPPER, 16),
         f"[default]\naws_access_key_id = {S}\nregion = eu-west-1",
         f"The deploy user has key {S} attached.")
    kind("aws secret access key", lambda r: _draw(r, B64, 40),
         f"[default]\naws_access_key_id = AKIAZ7QPLX3VNB2KJD4M\naws_secret_access_key = {S}",
         f"export AWS_SECRET_ACCESS_KEY={S}",
         f"my AWS secret key is {S}, the access key id is in the wiki",
         f'{{"Credentials": {{"AccessKeyId": "ASIAZ7QPLX3VNB2KJD4M", "SecretAccessKey": "{S}"}}}}')
    kind("aws session token", lambda r: "IQoJb3JpZ2luX2VjE" + _b64(r, 240).rstrip("="),
         f"aws_session_token = {S}",
         f'{{"Credentials": {{"SessionToken": "{S}", "Expiration": "2025-03-14T10:26:53Z"}}}}',
         f"the STS call returned {S} and it expires in an hour")
    kind("github classic token", lambda r: "ghp_" + _draw(r, ALNUM, 36),
         f"GITHUB_TOKEN={S}",
         f"git remote set-url origin https://{S}@github.com/acme/web.git",
         f"Use {S} for the release workflow.")
    kind("github fine-grained token", lambda r: "github_pat_11" + _draw(r, UPPER, 20) + "_" + _draw(r, ALNUM, 59),
         f"gh auth login --with-token <<< {S}",
         f"token: {S}")
    kind("github app token", lambda r: "ghs_" + _draw(r, ALNUM, 36),
         f"git clone https://x-access-token:{S}@github.com/acme/web.git",
         f'{{"token": "{S}", "expires_at": "2025-03-14T11:26:53Z"}}')
    kind("gitlab token", lambda r: "glpat-" + _draw(r, URLSAFE, 20),
         f'curl --header "PRIVATE-TOKEN: {S}" https://gitlab.example.com/api/v4/projects',
         f"Rotate GitLab token {S} before Friday",
         f"CI_JOB_TOKEN_OVERRIDE={S}")
    kind("slack bot token", lambda r: f"xoxb-{_draw(r, string.digits, 12)}-{_draw(r, string.digits, 13)}-"
         + _draw(r, ALNUM, 24),
         f"SLACK_BOT_TOKEN={S}",
         f"the bot posts with {S} into #deploys")
    kind("slack webhook", lambda r: f"T{_draw(r, UPPER, 8)}/B{_draw(r, UPPER, 10)}/{_draw(r, ALNUM, 24)}",
         f"SLACK_WEBHOOK_URL=https://hooks.slack.com/services/{S}",
         f"curl -X POST -d '{{\"text\": \"deployed\"}}' https://hooks.slack.com/services/{S}")
    kind("discord webhook", lambda r: _draw(r, string.digits, 18) + "/" + _draw(r, URLSAFE, 68),
         f"alerts go to https://discord.com/api/webhooks/{S}",
         f'webhook_url: "https://discordapp.com/api/webhooks/{S}"')
    kind("stripe secret key", lambda r: "sk_live_51" + _draw(r, ALNUM, 97),
         f"STRIPE_SECRET_KEY={S}",
         f"stripe.api_key = \"{S}\"",
         f"charged the test card with {S}")
    kind("stripe restricted key", lambda r: "rk_live_51" + _draw(r, ALNUM, 97),
         f"the reporting job uses {S}",
         f"STRIPE_REPORTING_KEY: {S}")
    kind("stripe webhook secret", lambda r: "whsec_" + _draw(r, ALNUM, 32),
         f"STRIPE_WEBHOOK_SECRET={S}",
         f"endpoint_secret = '{S}'",
         f"Stripe signs the staging webhooks with {S}")
    kind("google api key", lambda r: "AIzaSy" + _draw(r, URLSAFE, 33),
         f"https://maps.googleapis.com/maps/api/geocode/json?address=Berlin&key={S}",
         f"<script src=\"https://maps.googleapis.com/maps/api/js?key={S}\"></script>")
    kind("gcp private_key_id", lambda r: _draw(r, HEX, 40),
         f'{{"type": "service_account", "project_id": "acme-prod", "private_key_id": "{S}", '
         '"client_email": "deploy@acme-prod.iam.gserviceaccount.com"}',
         f"private_key_id: {S}")
    kind("gcp private key in json", lambda r: "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ" + _b64(r, 60)[:14],
         f'{{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\n{S}\\n'
         + "\\n".join(_pem_lines(_rng("gcp json"), 3)) + '\\n-----END PRIVATE KEY-----\\n", "client_id": "1043"}')
    kind("gcp oauth client secret", lambda r: "GOCSPX-" + _draw(r, URLSAFE, 28),
         f'{{"installed": {{"client_id": "1043.apps.googleusercontent.com", "client_secret": "{S}"}}}}',
         f"GOOGLE_CLIENT_SECRET={S}",
         f"the console shows {S} for the web client")
    kind("google oauth access token", lambda r: "ya29.a0" + _draw(r, URLSAFE, 150),
         f"Authorization: Bearer {S}",
         f'{{"access_token": "{S}", "expires_in": 3599, "token_type": "Bearer"}}',
         f"the failing Drive call sent {S}")
    kind("jwt", lambda r: (base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=") + "."
                           + base64.urlsafe_b64encode(json.dumps({"sub": _draw(r, string.digits, 10),
                                                                  "name": "Ann Lee", "iat": 1710408413})
                                                      .encode()).decode().rstrip("=")
                           + "." + _draw(r, URLSAFE, 43)),
         f"Cookie: session={S}",
         f"the failing request carried {S} in its header")
    kind("rsa private key", lambda r: _pem_lines(r, 1, "MIIEpAIBAAKCAQEA")[0],
         "-----BEGIN RSA PRIVATE KEY-----\n" + S + "\n" + "\n".join(_pem_lines(_rng("rsa more"), 4))
         + "\n-----END RSA PRIVATE KEY-----",
         "key.pem:\n-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,3F17F5316E2BAC89\n\n"
         + S + "\n-----END RSA PRIVATE KEY-----\nsaved")
    kind("openssh private key", lambda r: _pem_lines(r, 1, "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ")[0],
         "cat ~/.ssh/id_ed25519\n-----BEGIN OPENSSH PRIVATE KEY-----\n" + S + "\n"
         + "\n".join(_pem_lines(_rng("ssh more"), 3)) + "\n-----END OPENSSH PRIVATE KEY-----")
    kind("pgp private key block", lambda r: _pem_lines(r, 1, "lQOYBGXy")[0],
         "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n" + S + "\n" + "\n".join(_pem_lines(_rng("pgp more"), 3))
         + "\n=tV3m\n-----END PGP PRIVATE KEY BLOCK-----")
    kind("truncated private key", lambda r: _pem_lines(r, 1, "MIIEowIBAAKCAQEA")[0],
         "$ cat deploy.pem | head -5\n-----BEGIN RSA PRIVATE KEY-----\n" + S + "\n"
         + "\n".join(_pem_lines(_rng("cut more"), 2)) + "\n\nThe file is readable by everyone; fix its mode.")
    kind("private key without its BEGIN line", lambda r: _pem_lines(r, 1, "MIIEpAIBAAKCAQEA")[0],
         f"paste this into the deploy key field: {S}",
         f"{S}\n" + "\n".join(_pem_lines(_rng("bare more"), 2)))
    kind("hugging face token", lambda r: "hf_" + _draw(r, string.ascii_letters, 34),
         f"HF_TOKEN={S}",
         f"huggingface-cli login --token {S}")
    kind("npm token", lambda r: "npm_" + _draw(r, ALNUM, 36),
         f"//registry.npmjs.org/:_authToken={S}",
         f"NPM_TOKEN={S} npm publish",
         f"I published 2.4.1 with {S} from my laptop")
    kind("pypi token", lambda r: "pypi-AgEIcHlwaS5vcmcCJ" + _draw(r, URLSAFE, 150),
         f"[pypi]\nusername = __token__\npassword = {S}",
         f"TWINE_PASSWORD={S} twine upload dist/*",
         f"the release was uploaded with {S} yesterday")
    kind("sendgrid key", lambda r: "SG." + _draw(r, URLSAFE, 22) + "." + _draw(r, URLSAFE, 43),
         f"SENDGRID_API_KEY={S}",
         f"mail goes out through SendGrid with {S}")
    kind("twilio api key", lambda r: "SK" + _draw(r, HEX, 32),
         f"TWILIO_API_KEY={S}",
         f"client = Client(\"{S}\", api_secret, account_sid)")
    kind("twilio auth token", lambda r: _draw(r, HEX, 32),
         f"TWILIO_AUTH_TOKEN={S}",
         f'twilio:\n  account_sid: AC{_draw(_rng("sid"), HEX, 32)}\n  auth_token: "{S}"')
    kind("digitalocean token", lambda r: "dop_v1_" + _draw(r, HEX, 64),
         f"doctl auth init --access-token {S}",
         f"DIGITALOCEAN_TOKEN={S}",
         f"the droplet bootstrap script embeds {S}")
    kind("shopify access token", lambda r: "shpat_" + _draw(r, HEX, 32),
         f"X-Shopify-Access-Token: {S}",
         f"the storefront app uses {S}")
    kind("telegram bot token", lambda r: _draw(r, string.digits, 10) + ":AA" + _draw(r, URLSAFE, 33),
         f"curl https://api.telegram.org/bot{S}/sendMessage -d chat_id=42",
         f"TELEGRAM_BOT_TOKEN={S}")
    kind("azure storage account key", lambda r: _b64(r, 64),
         "DefaultEndpointsProtocol=https;AccountName=acmeprod;AccountKey=" + S + ";EndpointSuffix=core.windows.net",
         f"AZURE_STORAGE_KEY={S}")
    kind("azure sas signature", lambda r: _b64(r, 32).replace("+", "%2B").replace("/", "%2F").replace("=", "%3D"),
         "https://acmeprod.blob.core.windows.net/backups?sv=2022-11-02&ss=b&srt=co&sp=rl"
         f"&se=2025-12-31T00:00:00Z&spr=https&sig={S}")
    kind("http basic auth header", lambda r: base64.b64encode(f"deploy:{_password(r)}".encode()).decode(),
         f"Authorization: Basic {S}",
         f'curl -H "Authorization: Basic {S}" https://ci.example.com/api/json')
    kind("bearer token", lambda r: _draw(r, URLSAFE, 40),
         f"Authorization: Bearer {S}",
         f'fetch(url, {{headers: {{"Authorization": "Bearer {S}"}}}})',
         f'requests.get(url, headers={{"X-Auth": "Bearer {S}"}})')
    kind("oauth access token in json", lambda r: _draw(r, ALNUM, 48),
         f'{{"access_token": "{S}", "refresh_token": "{_draw(_rng("refresh"), ALNUM, 48)}", "expires_in": 3600}}')
    kind("token in a clone url", lambda r: _draw(r, HEX, 40),
         f"git clone https://{S}@github.com/acme/web.git",
         f"remote.origin.url=https://{S}@gitlab.example.com/acme/web.git")
    kind("redis url password", lambda r: _draw(r, ALNUM, 24),
         f"REDIS_URL=redis://:{S}@cache.internal:6379/0",
         f"connect with redis-cli -u redis://:{S}@10.0.4.12:6379")
    kind("postgres url password", lambda r: _password(r, 16, "-_.~"),
         f"DATABASE_URL=postgres://app:{S}@db.internal:5432/app",
         f"psql 'postgresql://admin:{S}@db-replica-2.eu-west-1.rds.amazonaws.com/app?sslmode=require'")
    kind("mongodb url password", lambda r: _password(r, 16, "-_.~"),
         f'MONGO_URI="mongodb+srv://admin:{S}@cluster0.ab1cd.mongodb.net/app?retryWrites=true"')
    kind("yaml db_password", lambda r: _password(r),
         f"database:\n  host: db.internal\n  db_password: {S}\n  pool: 5",
         f"db_password: '{S}'")
    kind("env export secret", lambda r: _password(r, 24, "_-"),
         f"export SECRET_TOKEN={S}",
         f"export APP_SECRET='{S}'")
    kind("ini password", lambda r: _password(r),
         f"[client]\nuser = deploy\npassword = {S}\nhost = db.internal",
         f"Password={S}")
    kind("json api key", lambda r: _draw(r, ALNUM, 32),
         f'{{"service": "geocoder", "api_key": "{S}", "timeout": 30}}',
         f"'apiKey': '{S}',")
    kind("django secret key", lambda r: "django-insecure-" + _draw(r, string.ascii_lowercase + string.digits
                                                                    + "!@#%^&*(-_=+)", 50),
         f"SECRET_KEY = '{S}'")
    kind("discord bot token", lambda r: "MT" + _draw(r, ALNUM, 24) + "." + _draw(r, URLSAFE, 6) + "."
         + _draw(r, URLSAFE, 38),
         f"DISCORD_TOKEN={S}",
         f"client.run('{S}')")
    kind("mailchimp api key", lambda r: _draw(r, HEX, 32) + "-us" + _draw(r, string.digits, 2),
         f"MAILCHIMP_KEY={S}",
         f"the newsletter sync uses {S}")
    kind("mailgun api key", lambda r: "key-" + _draw(r, HEX, 32),
         f"MAILGUN_API_KEY={S}",
         f"curl -s --user 'api:{S}' https://api.mailgun.net/v3/mg.example.com/messages",
         f"mail to the list goes out through Mailgun with {S}")
    kind("square oauth secret", lambda r: "sq0csp-" + _draw(r, URLSAFE, 43),
         f"SQUARE_APP_SECRET={S}",
         f"the Square app secret is {S}",
         f"Square answered 401 for {S}")
    kind("artifactory api key", lambda r: "AKCp" + _draw(r, ALNUM, 69),
         f"X-JFrog-Art-Api: {S}",
         f"artifactory_api_key={S}")
    kind("databricks token", lambda r: "dapi" + _draw(r, HEX, 32),
         f"DATABRICKS_TOKEN={S}",
         f"databricks configure --token {S}",
         f"the nightly job authenticates with {S}")
    kind("hashicorp vault token", lambda r: "hvs." + _draw(r, URLSAFE, 91),
         f"export VAULT_TOKEN={S}",
         f"X-Vault-Token: {S}",
         f"vault login {S}")
    kind("age secret key", lambda r: "AGE-SECRET-KEY-1" + _draw(r, CROCKFORD.upper(), 58),
         f"# created: 2025-03-14T09:26:53Z\n# public key: age1{_draw(_rng('age pub'), CROCKFORD, 58)}\n{S}")
    kind("grafana service account token", lambda r: "glsa_" + _draw(r, ALNUM, 32) + "_" + _draw(r, HEX, 8),
         f"GRAFANA_TOKEN={S}",
         f"the dashboard exporter runs with {S}")
    kind("new relic user key", lambda r: "NRAK-" + _draw(r, UPPER, 27),
         f"NEW_RELIC_API_KEY={S}",
         f"query NerdGraph with {S}")
    kind("passphrase of words", lambda r: " ".join(r.choice(["orbit", "lantern", "cobalt", "meadow", "tundra",
                                                              "pixel", "harbor", "quartz", "falcon", "ember"])
                                                     for _ in range(5)),
         f'passphrase = "{S}"',
         f"ssh_key_password: '{S}'")
    kind("letters-only password", lambda r: _draw(r, string.ascii_uppercase, 2) + _draw(r, string.ascii_lowercase, 3)
         + _draw(r, string.ascii_letters, 7),
         f"The admin password: {S}",
         f"password: {S}",
         f"db_password: {S}",
         f"the password is {S}, do not share it")
    kind("netrc password", lambda r: _password(r),
         f"machine api.example.com login deploy password {S}")
    kind("password in prose", lambda r: _password(r, 14, "!#%"),
         f"The staging admin password is {S}, rotate it after the demo.",
         f"Log in as root with password {S} and change it.")
    kind("docker config auth", lambda r: base64.b64encode(f"ci-bot:{_password(r)}".encode()).decode(),
         f'{{"auths": {{"registry.example.com": {{"auth": "{S}"}}}}}}')
    kind("curl user password", lambda r: _password(r, 16, "-_."),
         f"curl -u deploy:{S} https://ci.example.com/api/json",
         f"curl --user 'admin:{S}' -X POST https://jenkins.example.com/job/web/build")
    kind("laravel app key", lambda r: _b64(r, 32),
         f"APP_KEY=base64:{S}")
    kind("uuid api key", lambda r: str(__import__("uuid").UUID(int=r.getrandbits(128), version=4)),
         f"HEROKU_API_KEY={S}",
         f'{{"api_key": "{S}"}}')
    kind("datadog api key", lambda r: _draw(r, HEX, 32),
         f"DD_API_KEY={S}",
         f"datadog:\n  api_key: {S}\n  site: datadoghq.eu")
    kind("linear api key", lambda r: "lin_api_" + _draw(r, ALNUM, 40),
         f"LINEAR_API_KEY={S}",
         f"the triage bot calls Linear with {S}")
    kind("pulumi access token", lambda r: "pul-" + _draw(r, HEX, 40),
         f"PULUMI_ACCESS_TOKEN={S}",
         f"pulumi login with {S} failed")
    kind("terraform cloud token", lambda r: _draw(r, ALNUM, 14) + ".atlasv1." + _draw(r, URLSAFE, 67),
         f'credentials "app.terraform.io" {{\n  token = "{S}"\n}}',
         f"TF_TOKEN_app_terraform_io={S}",
         f"terraform login saved {S} in credentials.tfrc.json")
    kind("doppler token", lambda r: "dp.st.prd." + _draw(r, ALNUM, 43),
         f"DOPPLER_TOKEN={S}",
         f"doppler run --token {S} -- ./start.sh",
         f"the CI runner reads its settings with {S}")
    kind("postman api key", lambda r: "PMAK-" + _draw(r, HEX, 24) + "-" + _draw(r, HEX, 34),
         f"POSTMAN_API_KEY={S}",
         f"newman run collection.json --postman-api-key {S}",
         f"the monitor calls the Postman API with {S}")
    kind("grafana cloud token", lambda r: "glc_" + _b64(r, 60).rstrip("="),
         f"GRAFANA_CLOUD_TOKEN={S}",
         f"the agent ships metrics with {S}")
    kind("slack app token", lambda r: f"xapp-1-A{_draw(r, UPPER, 10)}-{_draw(r, string.digits, 13)}-"
         + _draw(r, HEX, 64),
         f"SLACK_APP_TOKEN={S}",
         f"socket mode connects with {S}")
    kind("command-line password", lambda r: _password(r, 16, "-_.~"),
         f"mysql -h db.internal -u deploy --password={S} app",
         f"docker login registry.example.com --username ci --password {S}")
    kind("okta api token", lambda r: "00" + _draw(r, URLSAFE, 40),
         f"Authorization: SSWS {S}",
         f"OKTA_API_TOKEN={S}")
    return out


def _lookalikes() -> dict[str, tuple[str, ...]]:
    r = _rng("look-alikes")

    def hx(n: int) -> str:
        return _draw(r, HEX, n)

    def ulid() -> str:
        return _draw(r, CROCKFORD, 26)

    def uuid4() -> str:
        return str(__import__("uuid").UUID(int=r.getrandbits(128), version=4))

    png = "iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAYAAAAf8/9hAAAA" + _b64(r, 300)
    svg = base64.b64encode(b'<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16">'
                           b'<circle cx="8" cy="8" r="7" fill="#4a90d9"/></svg>').decode()
    commit, short = hx(40), hx(7)
    return {
        "sha1 hashes": (
            f"{hx(40)}  vault_engine-0.1.0.tar.gz",
            f"The file's sha1 is {hx(40)}.",
            f'{{"sha1": "{hx(40)}", "size": 48213}}',
            f"snapshots/{hx(40)}/config.json",
        ),
        "sha256 hashes": (
            f"{hx(64)}  memvault-0.1.0-py3-none-any.whl",
            f"requests==2.31.0 --hash=sha256:{hx(64)}",
            f"image: ghcr.io/acme/web@sha256:{hx(64)}",
            f'{{"text_sha256": "{hx(64)}", "kind": "add"}}',
            f"digest: sha256:{hx(64)}",
        ),
        "md5 hashes": (
            f"md5: {hx(32)}",
            f'ETag: "{hx(32)}"',
            f"MD5 ({'backup.tar'}) = {hx(32)}",
        ),
        "uuids": (
            f"request_id={uuid4()}",
            f'{{"trace": "{uuid4()}", "span": "{hx(16)}"}}',
            f"/api/v1/orders/{uuid4()}/items",
            f"uuid: {uuid4().upper()}",
        ),
        "git commit ids": (
            f"commit {commit}\nAuthor: Ann Lee <ann@example.com>\n\n    Fix the race in sync",
            f"{short} Fix the race in sync\n{hx(7)} Add the journal repair",
            f"https://github.com/acme/web/commit/{commit}",
            f"Merge: {hx(7)} {hx(7)}",
            f"fixed in {hx(12)}, released in v2.4.1",
        ),
        "base64 data": (
            f"![logo](data:image/png;base64,{png})",
            f'<img src="data:image/svg+xml;base64,{svg}">',
            "echo SGVsbG8sIHdvcmxkISBUaGlzIGlzIGEgdGVzdCBvZiBiYXNlNjQu | base64 -d",
            f'"integrity": "sha512-{_b64(r, 64)}"',
        ),
        "public keys and certificates": (
            f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{_b64(r, 24)} ann@laptop",
            "-----BEGIN PUBLIC KEY-----\n" + "\n".join(_pem_lines(r, 4, "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA"))
            + "\n-----END PUBLIC KEY-----",
            "-----BEGIN CERTIFICATE-----\n"
            + "\n".join(_pem_lines(r, 4, "MIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUF"))
            + "\n-----END CERTIFICATE-----",
        ),
        "long identifiers": (
            "AbstractSingletonProxyFactoryBean extends AbstractFactoryBean",
            "def test_secrets_in_any_field_of_any_input_are_written_nowhere(live: Vault) -> None:",
            "payments-api-7d9f8b6c5-x2x9z   1/1   Running   0   3d4h",
            "com.example.payments.internal.TransactionReconciliationService",
            "Set AWS_SECRET_ACCESS_KEY and GITHUB_TOKEN in the CI settings, never in the repository.",
            'className="flex items-center justify-between px-4 py-2 md:px-8"',
            "getUserAccessTokenByRefreshToken(refreshTokenRepository)",
            "memories/global/deploy-token-rotation-5gbmp3.md",
        ),
        "version strings": (
            "Python 3.11.4 (main, Jun  7 2023, 12:45:48) [GCC 11.3.0] on linux",
            "v2.14.0-rc.1+build.5",
            "requests==2.31.0\ntantivy>=0.22,<0.28\nnumpy==1.26.4",
            '"engines": {"node": ">=18.17.0 <21"}',
            "go version go1.21.5 linux/amd64",
            "Chrome/120.0.6099.109 Safari/537.36",
        ),
        "file paths": (
            "/usr/local/lib/python3.11/site-packages/tantivy/tantivy.cpython-311-x86_64-linux-gnu.so",
            r"C:\Users\ann\AppData\Local\Temp\pip-req-build-8f3k2l1q\setup.py",
            f"~/.cache/huggingface/hub/models--sentence-transformers--all-MiniLM-L6-v2/snapshots/{hx(40)}/",
            f"/nix/store/{_draw(r, CROCKFORD, 32)}-python3-3.11.4/bin/python3",
            "node_modules/.pnpm/@babel+core@7.23.6/node_modules/@babel/core/lib/index.js",
            "/var/run/secrets/kubernetes.io/serviceaccount/token",
            ".memvault/sessions/claude-code-4f9a2c1e.jsonl",
        ),
        "memvault ids and digests": (
            f"id: m-{ulid()}\ntitle: Deploy notes\ntype: fact",
            f'{{"id":"e-{ulid()}","kind":"add","memory":"m-{ulid()}","payload":{{"text_sha256":"{hx(64)}"}},'
            '"ts":"2025-03-14T09:26:53Z"}',
            f"supersedes: m-{ulid()}\nsuperseded_by: m-{ulid()}",
            f"links:\n- '[[m-{ulid()}]]'\n- '[[Deploy notes]]'",
            f"scrubbed text: sha256:{hx(64)}",
        ),
        "urls without credentials": (
            f"https://github.com/acme/web/blob/{hx(40)}/vault_engine/store.py#L120",
            "git@github.com:acme/web.git",
            "see https://example.com/a:b@c for the docs",
            "s3://acme-backups/2025/01/db.dump",
            "https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=42s",
            "ssh://git@gitlab.example.com:2222/acme/web.git",
            "https://ann@example.com/calendar",
            "https://docs.python.org/3/library/re.html#re.Pattern.sub",
            "the format is postgres://user:pass@localhost:5432/app",
            'proxy_url="socks5h://<username>:<password>@proxy-host"',
            "DATABASE_URL=postgres://app:${DB_PASSWORD}@db.internal:5432/app",
        ),
        "secret words, ordinary values": (
            "token_count = 10840",
            "max_tokens: 256",
            "Reset the password from the settings page; the token bucket refills every second.",
            "password: ${DB_PASSWORD}",
            'api_key = os.environ["OPENAI_API_KEY"]',
            "token: ${{ secrets.GITHUB_TOKEN }}",
            "password_min_length = 12",
            "access_token_url = https://oauth.example.com/token",
            'password = getpass.getpass("Password: ")',
            '"password": "********"',
            "auth_token_ttl: 3600s",
            "token_type: Bearer",
            "export GITHUB_TOKEN=$(gh auth token)",
            "api_key: <your-api-key>",
            "client_secret: YOUR_CLIENT_SECRET",
            "Bearer of bad news",
            "secret_name: prod-db-credentials",
            "password = self.password",
            "The key insight: the secret manager's cache halves the latency.",
            "the token is walrus-c1-111",  # a name with numbers: a token's value must look generated
            "token: build-2024-rc1",
            "Change the password to something stronger.",
        ),
        "code and config around secrets": (
            'if not password:\n    raise ValueError("password required")',
            'token = response.json()["access_token"]',
            'headers = {"Authorization": f"Bearer {token}"}',
            "password_hash = bcrypt.hashpw(password, bcrypt.gensalt())",
            "valueFrom:\n  secretKeyRef:\n    name: db-credentials\n    key: password",
            'variable "db_password" {\n  type      = string\n  sensitive = true\n}',
            "password = var.db_password",
            "PGPASSWORD=$(cat /run/secrets/pg) psql -h db.internal",
            '{"password": "Enter your password", "password_hint": "At least 12 characters"}',
            "INFO token refreshed for user 4411 (expires in 3600s)",
            '{"tokens": 1532, "secret": false, "cached": true}',
            "api_key_env: OPENAI_API_KEY",
            "gh auth login --token-file ~/.config/gh/token",
            "authorization: required",
            "Authorization: Bearer YOUR_TOKEN",
            f'"secret_sha256": "{hx(64)}"',
            "api_key: SecretStr = Field(default=None)",
            "token: Optional[str] = None",
            "client = OpenAI(api_key=settings.openai_api_key)",
            "const apiKey = process.env.API_KEY;",
            'token := os.Getenv("TOKEN")',
            'password: ENV.fetch("DB_PASSWORD")',
            'echo "$PASSWORD" | docker login --username ci --password-stdin',
            "the Kubernetes secret db-creds-2x9z holds it; token 4f9a2c1e is the commit",
            "| token | string | the API token sent with each request |",
            "TOKEN_LIMIT=4096",
            "access_token_expires_at: 2025-03-14T10:26:53Z",
        ),
        "ip addresses and hosts": (
            "redis at 10.0.4.12:6379, postgres at 203.0.113.42:5432",
            "nameserver 8.8.8.8",
            "listen [2001:db8::1]:443",
            "db-replica-2.eu-west-1.rds.amazonaws.com",
        ),
        "numbers and dates": (
            "2025-03-14T09:26:53.589793Z",
            "created_at_ms: 1710408413589",
            "call +1-202-555-0143 for the on-call",
            "order #1234567890 shipped; build 20250314.3",
            "Elapsed: 00:12:45.318, exit code 0",
        ),
    }


KINDS = _kinds()
LOOKALIKES = _lookalikes()


def secret_samples() -> list[Sample]:
    """Every text of every kind, with its secret filled in."""
    return [Sample(name, text.replace(S, secret), secret) for name, (secret, texts) in KINDS.items()
            for text in texts]


def lookalike_samples() -> list[Sample]:
    return [Sample(name, text) for name, texts in LOOKALIKES.items() for text in texts]


def private_part(kind: str) -> str:
    """The secret of ``kind`` past its public prefix: what no text may hold but the secret's own."""
    secret = KINDS[kind][0]
    return secret[len(PUBLIC[kind]):]


def leaked(secret: str, text: str) -> bool:
    """Whether ``WINDOW`` characters in a row of ``secret`` are still in ``text``."""
    size = min(WINDOW, len(secret))
    return any(secret[i:i + size] in text for i in range(len(secret) - size + 1))
