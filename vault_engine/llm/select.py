"""Which language model a vault uses (``[llm] provider``): read in one place."""

from __future__ import annotations

from collections.abc import Mapping

from ..config import LlmSettings, environment
from ..errors import ConfigError
from .base import Llm

PROVIDERS = ("auto", "offline", "anthropic")
KEY_VARIABLE = "ANTHROPIC_API_KEY"


def select(settings: LlmSettings, environ: Mapping[str, str] | None = None, *, load_chars: int = 6000) -> Llm:
    """``anthropic`` when asked for (or ``auto`` with ``ANTHROPIC_API_KEY`` set), else the offline model.

    Raises:
        ConfigError: ``anthropic`` is asked for without a key, or the provider is unknown.
    """
    key = environment(environ).anthropic_api_key
    provider = settings.provider
    if provider not in PROVIDERS:
        raise ConfigError(f"setting llm.provider must be one of {', '.join(PROVIDERS)}, got {provider!r}")
    if provider == "anthropic" and not key:
        raise ConfigError(f"llm.provider is anthropic but {KEY_VARIABLE} is not set")
    if provider == "offline" or not key:
        from .offline import OfflineLlm

        return OfflineLlm(load_chars=load_chars)
    from .claude import ClaudeLlm

    return ClaudeLlm(settings, api_key=key)
