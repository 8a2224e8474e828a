"""Reference GPU kernels shipped with kernelopt, one folder per kernel family."""
