"""Benchmarks record the CPU their numbers came from (the int8 cosine bar depends on it)."""

import pytest

from benchmarks.machine import cpu_info, machine_info

INTEL = """processor\t: 0
model name\t: Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz
flags\t\t: fpu sse4_2 avx avx2 fma avx512f avx512bw avx512_vnni

processor\t: 1
model name\t: Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz
flags\t\t: fpu sse4_2 avx avx2 fma avx512f avx512bw avx512_vnni
"""


@pytest.mark.unit
def test_cpu_model_and_kernel_flags_are_read(tmp_path):
    path = tmp_path / "cpuinfo"
    path.write_text(INTEL)
    got = cpu_info(path)
    assert got["model"] == "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz"
    assert got["flags"]["avx512_vnni"] is True and got["flags"]["amx_int8"] is False


@pytest.mark.unit
def test_missing_cpuinfo_still_names_a_cpu(tmp_path):
    got = cpu_info(tmp_path / "absent")
    assert got["model"] and not any(got["flags"].values())
    assert machine_info()["cpu"]["model"]
