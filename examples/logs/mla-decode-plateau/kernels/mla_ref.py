"""Reference MLA decode in torch (eager): bmm, fp32 softmax, bmm."""

import torch


def mla_decode_ref(q, kv_dense, sm_scale):
    """q [b, s_q, h_q, 576], kv_dense [b, t, 576] -> out [b, s_q, h_q, 512], lse [b, h_q, s_q]."""
    b, s_q, h_q, _ = q.shape
    scores = torch.einsum("bshd,btd->bhst", q.float(), kv_dense.float()) * sm_scale
    t = kv_dense.shape[1]
    causal = torch.arange(t, device=q.device)[None, :] <= (t - s_q + torch.arange(s_q, device=q.device))[:, None]
    scores = scores.masked_fill(~causal, float("-inf"))
    lse = torch.logsumexp(scores, dim=-1)
    out = torch.einsum("bhst,btd->bshd", torch.softmax(scores, dim=-1), kv_dense[..., :512].float())
    return out.to(q.dtype), lse
