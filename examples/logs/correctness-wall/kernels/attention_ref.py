"""Reference causal attention in float64."""

import torch


def attention_ref(q, k, v, sm_scale):
    """q, k, v [b*h, t, d] -> out [b*h, t, d], lse [b*h, t] (natural log), in float64."""
    s = torch.einsum("btd,bsd->bts", q.double(), k.double()) * sm_scale
    t = q.shape[1]
    s = s.masked_fill(torch.ones(t, t, dtype=torch.bool).triu(1), float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    return torch.einsum("bts,bsd->btd", torch.softmax(s, dim=-1), v.double()), lse
