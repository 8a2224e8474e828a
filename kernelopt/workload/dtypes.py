"""Canonical dtype names for the dtypes traces spell in many ways.

PyTorch profiler traces write C++ type names (``c10::BFloat16``, ``long int``), recorders
write ``torch.bfloat16``, people write ``bf16``. A profile compares dtypes by one canonical
name per dtype, the name ``torch`` uses without its ``torch.`` prefix.
"""

from __future__ import annotations

from kernelopt._errors import InputError, expected

__all__ = ["KNOWN_DTYPES", "canonical_dtype"]

KNOWN_DTYPES = (
    "bfloat16",
    "bool",
    "complex128",
    "complex64",
    "float16",
    "float32",
    "float4_e2m1",
    "float64",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "int16",
    "int32",
    "int64",
    "int8",
    "uint16",
    "uint32",
    "uint64",
    "uint8",
)

_ALIASES = {
    # C++ names written by the PyTorch profiler ("Input type").
    "float": "float32",
    "double": "float64",
    "c10::half": "float16",
    "c10::bfloat16": "bfloat16",
    "long int": "int64",
    "long": "int64",
    "int": "int32",
    "short int": "int16",
    "short": "int16",
    "signed char": "int8",
    "unsigned char": "uint8",
    "c10::float8_e4m3fn": "float8_e4m3fn",
    "c10::float8_e5m2": "float8_e5m2",
    "c10::float8_e4m3fnuz": "float8_e4m3fnuz",
    "c10::float8_e5m2fnuz": "float8_e5m2fnuz",
    "c10::float8_e8m0fnu": "float8_e8m0fnu",
    "c10::complex<float>": "complex64",
    "c10::complex<double>": "complex128",
    # Short spellings people and other tools use.
    "half": "float16",
    "fp16": "float16",
    "f16": "float16",
    "bf16": "bfloat16",
    "fp32": "float32",
    "f32": "float32",
    "fp64": "float64",
    "f64": "float64",
    "i64": "int64",
    "i32": "int32",
    "i16": "int16",
    "i8": "int8",
    "u8": "uint8",
    "byte": "uint8",
    "fp8": "float8_e4m3fn",
    "fp8_e4m3": "float8_e4m3fn",
    "e4m3": "float8_e4m3fn",
    "fp8_e5m2": "float8_e5m2",
    "e5m2": "float8_e5m2",
    "float4_e2m1fn_x2": "float4_e2m1",
    "fp4": "float4_e2m1",
    "cfloat": "complex64",
    "cdouble": "complex128",
}


def canonical_dtype(name: str) -> str | None:
    """Return the canonical name of dtype ``name``, or None when the name is unknown.

    Parameters
    ----------
    name : str
        A dtype as some tool wrote it: ``"torch.bfloat16"``, ``"c10::BFloat16"``,
        ``"bf16"``, ``"long int"``, ``"float32"``.

    Examples
    --------
    >>> canonical_dtype("c10::BFloat16"), canonical_dtype("torch.int32"), canonical_dtype("x")
    ('bfloat16', 'int32', None)
    """
    if not isinstance(name, str):
        raise InputError(expected("a dtype name (str)", type(name).__name__, where="name"))
    key = name.strip().lower()
    for prefix in ("torch.", "numpy.", "np."):
        if key.startswith(prefix):
            key = key[len(prefix) :]
    if key in KNOWN_DTYPES:
        return key
    return _ALIASES.get(key)
