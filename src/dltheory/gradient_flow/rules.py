"""The prologue's rules, fixed before the run (see ``dltheory.claims``, "Rules").

By the book's kinds rule (evidence only if it could fail on correct code were a paper wrong
about the networks and data the chapter runs) the prologue has no evidence: it has no paper,
and each of its claims checks the book's own code against calculus or a proved theorem.

* ``GF.grad_vs_loss``: the gradient against central differences of the same loss, calculus
  on the book's code (an identity);
* ``GF.identity``, ``GF.tau_exponent``, ``GF.k_exponent``: the one-step identity and
  the drift rates that follow from it (identities);
* ``GF.gd_to_flow_order``: Euler's method is first order, a theorem, checked against this
  model's own flow (a derivation).

``DECIDES``: no hard claim to decide at any scale.
"""

from __future__ import annotations

KINDS: dict[str, str] = {
    "GF.grad_vs_loss": "identity",
    "GF.identity": "identity",
    "GF.tau_exponent": "identity",
    "GF.k_exponent": "identity",
    "GF.gd_to_flow_order": "derivation",
}
DECIDES: dict[str, tuple[str, ...]] = {"smoke": (), "standard": (), "paper": ()}
