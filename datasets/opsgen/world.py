"""The generator's world: tenants, people, identifier allocators and the document store."""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field

from . import pools
from .common import Doc

# Identifiers used by the hand-written documents; the generator never hands them out.
RESERVED = {
    "OPS-2987",
    "OPS-3318",
    "RO-7702",
    "RO-7719",
    "CHG-4398",
    "CHG-4410",
    "E-4471",
    "acme-9",
}


@dataclass
class Tenant:
    name: str
    display: str
    currencies: list[str]
    banks: list[str]
    accounts: list[tuple[str, str, str]]  # (account id, currency, bank)
    contacts: list[str]
    cutover: dt.date | None  # settlement platform v3 cutover
    groups: list[str] = field(default_factory=list)


class World:
    """Holds the RNG, the tenants and every document and case made so far."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.docs: dict[str, Doc] = {}
        self.cases: list[dict] = []
        self.used: set[str] = set(RESERVED)
        self.builds: dict[str, list[int]] = {}
        self.staff = self._staff()
        self.tenants = {t: self._tenant(t) for t in pools.TENANTS}

    # identifiers -----------------------------------------------------------------
    def unique(self, make) -> str:
        for _ in range(10000):
            value = make()
            if value not in self.used:
                self.used.add(value)
                return value
        raise RuntimeError("identifier space exhausted")

    def ticket_key(self) -> str:
        return self.unique(lambda: f"OPS-{self.rng.randrange(1000, 9999)}")

    def rollout_id(self) -> str:
        return self.unique(lambda: f"RO-{self.rng.randrange(1000, 9999)}")

    def change_id(self) -> str:
        return self.unique(lambda: f"CHG-{self.rng.randrange(1000, 9999)}")

    def error_code(self) -> str:
        return self.unique(lambda: f"E-{self.rng.randrange(1000, 9899)}")

    def commit(self) -> str:
        return self.unique(lambda: "".join(self.rng.choice("0123456789abcdef") for _ in range(7)))

    def build(self, service: str) -> str:
        ver = self.builds.setdefault(
            service, [self.rng.randrange(2, 6), self.rng.randrange(0, 12), 0]
        )
        if self.rng.random() < 0.2:
            ver[1] += 1
            ver[2] = 0
        else:
            ver[2] += 1
        return f"{ver[0]}.{ver[1]}.{ver[2]}"

    # people ------------------------------------------------------------------------
    def _staff(self) -> dict[str, list[str]]:
        names = list(pools.SURNAMES)
        self.rng.shuffle(names)
        # surnames used by hand-written documents keep their roles
        roles = {
            "engineering": names[0:14],
            "operations": names[14:24],
            "support": names[24:32],
            "implementation_team": names[32:38],
            "approvers": names[38:44],
            "incident_review": names[44:48],
        }
        return roles

    def person(self, role: str) -> str:
        return self.rng.choice(self.staff[role])

    def _tenant(self, name: str) -> Tenant:
        rng = self.rng
        others = [c for c in pools.CURRENCIES if c != "EUR"]
        currencies = ["EUR"] + sorted(rng.sample(others, rng.randrange(1, 4)))
        banks = rng.sample(pools.BANKS, 3)
        accounts = []
        for cur in currencies:
            for _ in range(rng.randrange(1, 3)):
                acct = self.unique(lambda: f"{name}-{rng.randrange(100, 99999)}")
                accounts.append((acct, cur, rng.choice(banks)))
        contacts = [
            f"{rng.choice(pools.FIRST_NAMES)} {rng.choice(pools.SURNAMES)}" for _ in range(3)
        ]
        return Tenant(name, pools.DISPLAY[name], currencies, banks, accounts, contacts, None)

    # store -------------------------------------------------------------------------
    def add(self, doc: Doc) -> Doc:
        if doc.doc_id in self.docs:
            raise ValueError(f"duplicate doc_id {doc.doc_id}")
        self.docs[doc.doc_id] = doc
        return doc
