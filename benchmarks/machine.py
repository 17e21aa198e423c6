"""The machine a benchmark ran on, for its JSON: CPU model, cores and the instruction-set
flags that change numeric results (int8 and fp32 kernels pick their code path by them).
"""

from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import Any

CPUINFO = Path("/proc/cpuinfo")
# flags that select different matrix kernels in ONNX Runtime / torch, so different rounding
KERNEL_FLAGS = ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512_vnni",
                "avx_vnni", "avx512_bf16", "amx_int8", "amx_bf16", "asimd", "asimddp")


def cpu_info(cpuinfo: Path = CPUINFO) -> dict[str, Any]:
    """CPU model name and which of KERNEL_FLAGS it has, read from /proc/cpuinfo."""
    model, flags = platform.processor() or platform.machine(), set[str]()
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key in ("model name", "Model", "cpu model") and value.strip():
            model = value.strip()
        elif key in ("flags", "Features"):
            flags |= set(value.split())
    return {"model": model, "flags": {f: f in flags for f in KERNEL_FLAGS}}


def machine_info() -> dict[str, Any]:
    """Cores, Python version and CPU for a benchmark's "machine" entry."""
    return {"cpus": os.cpu_count(), "python": platform.python_version(),
            "platform": platform.platform(), "cpu": cpu_info()}
