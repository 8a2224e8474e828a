"""Reference RMSNorm in torch."""

import torch


def rmsnorm_ref(x, weight, eps):
    """x [n_rows, n_cols] -> x * rsqrt(mean(x^2) + eps) * weight, computed in float32."""
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * weight.float()).to(x.dtype)
