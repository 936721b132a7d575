"""Many agents at once: N agents call the tools while a sync edits, deletes and revokes: latency, leaks.

For each backend and each N (``--agents 1,4,16``), on a synthetic multi-tenant corpus written to a
folder (``--docs`` documents: tenants acme, globex, initech and global; ACL groups ops and finance or
none; each text carries its own doc id as a marker; documents link to their neighbours):

* **milvus**: one Milvus server process (milvus-lite's, started on loopback, or
  ``RAGKIT_MILVUS_URI``), the folder's index copied into it; N agent threads, each with its own
  ``MilvusIndex`` handle (its own gRPC connection) and a ``Toolbox`` bound to its caller;
* **memory**: the folder's index in an index folder, served by one ``ragkit mcp --index IDX
  --tenant T --groups G`` process per agent (the official MCP client over stdio; each server follows
  the index folder live);
* **memory-tools** (not in the default run): N agent threads over the tools, each following the
  index folder live (``LiveIndex``), without MCP processes.

Each agent loops for ``--seconds`` (and at most ``--max-calls`` calls): ``search_knowledge`` on a
topic, ``retrieve_documents`` of the top hits plus a *probe* (one of the caller's documents the
sync is about to change, or just changed: edited, deleted or revoked), ``related_documents`` of the
probe. Meanwhile a sync thread
changes the folder every ``--sync-every`` seconds (an edit, a delete, an ACL revocation to a group
no caller has, an addition, in turn) and reconciles the index with ``ragkit.index.sync_folder`` (on
Milvus through ``MilvusTarget``), recording when each commit returned.

Leaks are checked from the responses alone (what a model is shown): every doc id in a response's
content (results, documents, related lists, close-id suggestions; not the envelope's own link
lists, notices or messages echoing the request) names its tenant and group, so a document outside
the caller's scope is a **tenant/ACL leak**; a document whose deletion or revocation *committed
before the request was sent* is a **deleted/revoked leak**. One whose commit fell while the request
was in flight is counted apart (in flight), not as a leak.

Usage: OMP_NUM_THREADS=1 python bench/load_agents.py [--backends milvus,memory] [--agents 1,4,16]
           [--seconds 20] [--docs 240] [--sync-every 1] [--rerank fuse|none]
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _common import ROOT, parser, pct, publish

from ragkit import Funnel, FunnelSettings, Index, Scope, Toolbox
from ragkit.backends.milvus import MilvusConfig, MilvusIndex, MilvusTarget, start_local
from ragkit.index import IndexFolder, LiveIndex, sync_folder
from ragkit.tools import read_tool_text
from ragkit.tools.responses import for_model

TENANTS = ("acme", "globex", "initech")
GROUPS = ("open", "ops", "finance")
TOPICS = ("settlement cutoff", "ledger rotation", "bank file", "reconciliation job", "payout batch",
          "fx conversion", "refund window", "chargeback review")
DOC_ID = re.compile(r"\b(acme|globex|initech|global)-(open|ops|finance)-(\d{4})\b")
#: keys whose values name documents without showing them (the envelope's links, notices, echoes)
NOT_CONTENT = frozenset({"links", "supersedes", "superseded_by", "notices", "message", "query", "example",
                         "filters", "field"})
CHANGES = ("edit", "delete", "revoke", "add")
TOOLS = ("search_knowledge", "retrieve_documents", "related_documents")


def callers(n: int) -> list[Scope]:
    """The ``n`` agents' callers: tenants and groups in turn (every caller also sees ``global``)."""
    return [Scope(TENANTS[i % 3], [g for g in (GROUPS[(i // 3) % 3],) if g != "open"]) for i in range(n)]


def doc_file(folder: Path, tenant: str, group: str, i: int, *, acl: str | None = None, note: str = "") -> str:
    """Write one synthetic document; returns its id (``tenant-group-NNNN``: its scope is in its name)."""
    doc_id = f"{tenant}-{group}-{i:04d}"
    rng = random.Random(i)
    topics = rng.sample(TOPICS, 2)
    groups = acl if acl is not None else ("" if group == "open" else group)
    links = ", ".join(f"{tenant}-{GROUPS[(GROUPS.index(group) + k) % 3]}-{(i + k) % 10000:04d}"
                      for k in (1, 2))
    front = {"doc_id": doc_id, "title": f"{tenant} {group} note {i}", "tenant": tenant,
             "source_type": ("runbook", "policy", "ticket")[i % 3], "links": f"[{links}]"}
    if groups:
        front["acl_groups"] = f"[{groups}]"
    head = "".join(f"{k}: {v}\n" for k, v in front.items())
    body = (f"Marker {doc_id}. The {topics[0]} procedure for {tenant} runs after the {topics[1]} step; "
            f"operators check the {topics[0]} log and the {topics[1]} report before closing. {note}")
    (folder / f"{doc_id}.md").write_text(f"---\n{head}---\n# {tenant} {group} note {i}\n\n{body}\n",
                                         encoding="utf-8")
    return doc_id


def write_corpus(folder: Path, docs: int) -> list[str]:
    """The synthetic corpus (``docs`` documents across tenants and groups, one in 16 global)."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    ids = []
    for i in range(docs):
        tenant = "global" if i % 16 == 15 else TENANTS[i % 3]
        group = "open" if tenant == "global" else GROUPS[(i // 3) % 3]
        ids.append(doc_file(folder, tenant, group, i))
    return ids


def allowed(doc_id: str, scope: Scope) -> bool:
    """Whether ``scope`` may read ``doc_id`` as first written (its name says its tenant and group)."""
    m = DOC_ID.fullmatch(doc_id)
    if m is None:
        return False
    tenant, group = m.group(1), m.group(2)
    return tenant in (scope.tenant, "global") and (group == "open" or group in scope.groups)


def content_ids(value: Any, key: str = "") -> set[str]:
    """Doc ids named in a response's content (see the module docstring for what is not content)."""
    if key in NOT_CONTENT:
        return set()
    if isinstance(value, dict):
        return set().union(*(content_ids(v, k) for k, v in value.items())) if value else set()
    if isinstance(value, list):
        return set().union(*(content_ids(v, key) for v in value)) if value else set()
    if isinstance(value, str):
        return {m.group(0) for m in DOC_ID.finditer(value)}
    return set()


@dataclass
class Run:
    """What one (backend, N) run measured."""

    backend: str
    agents: int
    seconds: float = 0.0
    latencies: dict[str, list[float]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    refused: int = 0
    leaks: dict[str, list[str]] = field(default_factory=lambda: {"tenant": [], "deleted": [], "revoked": []})
    in_flight: int = 0
    syncs: list[tuple[str, str, float, float]] = field(default_factory=list)  # kind, doc id, commit, cost
    load: tuple[float, float] = (0.0, 0.0)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, tool: str, scope: Scope, started: float, ended: float, response: dict[str, Any] | None,
               error: str | None = None) -> None:
        """One call: its latency, whether it failed, and every leak its response shows."""
        with self.lock:
            self.latencies.setdefault(tool, []).append((ended - started) * 1000)
            if error is not None or response is None:
                self.errors.append(f"{tool}: {error}")
                return
            if not response.get("ok", True):
                problem = response.get("error") or {}
                if problem.get("code") in ("internal", "invalid_arguments"):
                    self.errors.append(f"{tool}: {problem.get('code')}: {problem.get('message')}")
                else:
                    self.refused += 1
            tenants = {r.get("tenant") for r in response.get("results", [])} - {None}
            if tenants - {scope.tenant, "global"}:
                self.leaks["tenant"].append(f"{scope}: tenant {sorted(tenants)} in {tool}")
            changed = {d: (kind, at) for kind, d, at, _cost in self.syncs if kind in ("delete", "revoke")}
            for doc_id in content_ids(response):
                if not allowed(doc_id, scope):
                    self.leaks["tenant"].append(f"{scope}: {doc_id} in {tool}")
                elif doc_id in changed:
                    kind, at = changed[doc_id]
                    if at < started:
                        self.leaks["deleted" if kind == "delete" else "revoked"].append(
                            f"{scope}: {doc_id} in {tool}, {started - at:.3f} s after the commit")
                    elif at <= ended:
                        self.in_flight += 1

    def row(self) -> dict[str, Any]:
        """The table row: calls, throughput, p50/p95 latency, errors, leaks, syncs."""
        every = [x for v in self.latencies.values() for x in v]
        costs = [c for _k, _d, _a, c in self.syncs]
        return {"backend": self.backend, "agents": self.agents, "calls": len(every),
                "calls_per_s": len(every) / self.seconds if self.seconds else 0.0,
                "p50_ms": pct(every, 0.5), "p95_ms": pct(every, 0.95),
                "per_tool": {t: [pct(v, 0.5), pct(v, 0.95), len(v)] for t, v in self.latencies.items()},
                "errors": len(self.errors), "first_errors": self.errors[:5], "refused": self.refused,
                "leaks": {k: len(v) for k, v in self.leaks.items()},
                "first_leaks": [x for v in self.leaks.values() for x in v][:5], "in_flight": self.in_flight,
                "syncs": len(self.syncs), "sync_p50_s": pct(costs, 0.5),
                "sync_max_s": max(costs, default=0.0),
                "by_kind": {k: sum(1 for s in self.syncs if s[0] == k) for k in CHANGES},
                "load": list(self.load)}


class Syncer(threading.Thread):
    """Changes the folder every ``every`` seconds (edit, delete, revoke, add in turn) and syncs it."""

    def __init__(self, folder: Path, target: Any, run: Run, victims: list[str], every: float,
                 stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self.folder, self.target, self.measured, self.victims = folder, target, run, victims
        self.every, self.stop, self.step = every, stop, 0
        self.failures: list[str] = []

    def run(self) -> None:
        """Change, sync, record the commit time; until :attr:`stop` is set."""
        while not self.stop.wait(self.every):
            kind = CHANGES[self.step % len(CHANGES)]
            doc_id = self.victims[self.step % len(self.victims)]
            tenant, group, number = DOC_ID.fullmatch(doc_id).groups()  # type: ignore[union-attr]
            if kind == "edit":
                doc_file(self.folder, tenant, group, int(number), note=f"Revised at step {self.step}.")
            elif kind == "delete":
                (self.folder / f"{doc_id}.md").unlink(missing_ok=True)
            elif kind == "revoke":
                doc_file(self.folder, tenant, group, int(number), acl="restricted")
            else:
                doc_id = doc_file(self.folder, tenant, group, 9000 + self.step)
            t0 = time.monotonic()
            try:
                sync_folder(self.folder, target=self.target, progress=False)
            except Exception as exc:  # noqa: BLE001 - reported with the run
                self.failures.append(f"{kind} {doc_id}: {type(exc).__name__}: {exc}")
                with self.measured.lock:
                    self.measured.errors.append(f"sync: {self.failures[-1]}")
                self.step += 1
                continue
            done = time.monotonic()
            with self.measured.lock:
                self.measured.syncs.append((kind, doc_id, done, done - t0))
            self.step += 1


def plan_victims(ids: list[str], seed: int = 11) -> list[str]:
    """The documents the sync changes, in order (each at most once; never a global one)."""
    pool = [d for d in ids if not d.startswith("global")]
    random.Random(seed).shuffle(pool)
    return pool


def next_call(tool: str, rng: random.Random, scope: Scope, victims: list[str], top: list[str],
              probe: list[str]) -> dict[str, Any]:
    """The arguments of the agent's next call: a search on a topic, a read of the top hits and the
    probe, the related documents of the probe."""
    if tool == "search_knowledge":
        # a different query each time (a note number), so reranker scores are not served from its cache
        return {"query": f"{rng.choice(TOPICS)} {scope.tenant} note {rng.randrange(10000)}", "k": 4}
    if tool == "retrieve_documents":
        return {"ids": top[:2] + probe}
    return {"doc_id": probe[0]}


def pick_probe(rng: random.Random, scope: Scope, victims: list[str], run: Run) -> list[str]:
    """One of the caller's documents that the sync changes around now (just before, or just after)."""
    step = len(run.syncs)
    near = [v for v in victims[max(0, step - 12):step + 12] if allowed(v, scope)]
    return [rng.choice(near or [v for v in victims if allowed(v, scope)][:5] or victims[:5])]


def tools_agent(box: Toolbox, scope: Scope, run: Run, victims: list[str], go: threading.Event,
                deadline: list[float], max_calls: int, seed: int) -> None:
    """One agent over the tools in this process (its own index handle)."""
    rng = random.Random(seed)
    go.wait()
    calls = 0
    while time.monotonic() < deadline[0] and calls < max_calls:
        top: list[str] = []
        probe = pick_probe(rng, scope, victims, run)
        for tool in TOOLS:
            args = next_call(tool, rng, scope, victims, top, probe)
            t0 = time.monotonic()
            try:
                response = for_model(box.call(tool, args))
                run.record(tool, scope, t0, time.monotonic(), response)
            except Exception as exc:  # noqa: BLE001 - counted as an error, the agent goes on
                run.record(tool, scope, t0, time.monotonic(), None, f"{type(exc).__name__}: {exc}")
                response = {}
            if tool == "search_knowledge":
                top = [r["doc_id"] for r in response.get("results", [])]
            calls += 1


def run_threads(name: str, folder: Path, target: Any, open_index: Any, n: int, args: Any) -> Run:
    """N agent threads over the tools (each its own index handle), while a sync changes the folder."""
    run, go, stop, deadline = Run(name, n), threading.Event(), threading.Event(), [0.0]
    victims = plan_victims([p.stem for p in sorted(folder.glob("*.md"))])
    threads = []
    for i, scope in enumerate(callers(n)):
        handle = open_index()
        box = Toolbox(handle, scope, funnel=Funnel(handle, FunnelSettings(rerank_mode=args.rerank)))
        box.search_knowledge("warm up " + TOPICS[i % len(TOPICS)])  # models loaded before the clock starts
        threads.append(threading.Thread(target=tools_agent, daemon=True, args=(
            box, scope, run, victims, go, deadline, args.max_calls, i)))
    for t in threads:
        t.start()
    syncer = Syncer(folder, target, run, victims, args.sync_every, stop)
    run.load = (os.getloadavg()[0], 0.0)
    t0 = time.monotonic()
    deadline[0] = t0 + args.seconds
    syncer.start()
    go.set()
    for t in threads:
        t.join(args.seconds + 120)
    stop.set()
    syncer.join(120)
    run.seconds = time.monotonic() - t0
    run.load = (run.load[0], os.getloadavg()[0])
    return run


def run_milvus(uri: str, folder: Path, base: Index, n: int, args: Any, embedder: Any = None) -> Run:
    """N agent threads over the tools against one Milvus server (the base index copied in as is)."""
    config = MilvusConfig(uri, os.environ.get("RAGKIT_MILVUS_TOKEN", ""), collection=f"load_agents_{n}")
    MilvusIndex.from_index(base, config, drop_existing=True)
    target = MilvusTarget(config, embedder=embedder)
    sync_folder(folder, target=target, progress=False)  # records the folder's paths: nothing to write
    try:
        return run_threads("milvus", folder, target, lambda: MilvusIndex.open(config, embedder=embedder), n,
                           args)
    finally:
        MilvusIndex.open(config).drop()


def run_memory_tools(folder: Path, base_path: Path, work: Path, n: int, args: Any,
                     embedder: Any = None) -> Run:
    """N agent threads over the tools, each following the index folder live (``LiveIndex``)."""
    index = work / f"index-tools-{n}"
    if index.exists():
        shutil.rmtree(index)
    shutil.copytree(base_path, index)
    target = IndexFolder(index, embedder=embedder)
    return run_threads("memory-tools", folder, target, lambda: LiveIndex(index, embedder=embedder), n, args)


async def _mcp_agent(index: Path, scope: Scope, run: Run, victims: list[str], ready: Any, go: Any,
                     deadline: list[float], max_calls: int, seed: int) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "ragkit.app.cli", "mcp", "--index", str(index), "--tenant", scope.tenant,
        "--groups", ",".join(sorted(scope.groups))], cwd=str(ROOT),
        env={**os.environ, "OMP_NUM_THREADS": "1"})
    rng = random.Random(seed)
    async with stdio_client(params) as (read, write), \
            ClientSession(read, write, read_timeout_seconds=600) as s:
        await s.initialize()
        await s.call_tool("search_knowledge", {"query": "warm up"})  # the server loads its models
        ready()
        await go.wait()
        calls = 0
        while time.monotonic() < deadline[0] and calls < max_calls:
            top: list[str] = []
            probe = pick_probe(rng, scope, victims, run)
            for tool in TOOLS:
                args = next_call(tool, rng, scope, victims, top, probe)
                t0 = time.monotonic()
                try:
                    result = await s.call_tool(tool, args)
                    response = read_tool_text(result.content[0].text)
                    run.record(tool, scope, t0, time.monotonic(), response)
                except Exception as exc:  # noqa: BLE001 - counted as an error, the agent goes on
                    run.record(tool, scope, t0, time.monotonic(), None, f"{type(exc).__name__}: {exc}")
                    response = {}
                if tool == "search_knowledge":
                    top = [r["doc_id"] for r in response.get("results", [])]
                calls += 1


def run_memory(folder: Path, base_path: Path, work: Path, n: int, args: Any) -> Run:
    """One ``ragkit mcp`` process per agent over an index folder, while a sync changes the folder."""
    import anyio

    index = work / f"index-{n}"
    if index.exists():
        shutil.rmtree(index)
    shutil.copytree(base_path, index)
    run, stop, deadline = Run("memory", n), threading.Event(), [0.0]
    victims = plan_victims([p.stem for p in sorted(folder.glob("*.md"))])
    syncer = Syncer(folder, IndexFolder(index), run, victims, args.sync_every, stop)
    started: dict[str, float] = {}

    async def agents() -> None:
        go, warm = anyio.Event(), [0]

        def ready() -> None:
            warm[0] += 1

        async with anyio.create_task_group() as tg:
            for i, scope in enumerate(callers(n)):
                tg.start_soon(_mcp_agent, index, scope, run, victims, ready, go, deadline, args.max_calls, i)
            while warm[0] < n:
                await anyio.sleep(0.2)
            run.load = (os.getloadavg()[0], 0.0)
            started["t0"] = time.monotonic()
            deadline[0] = started["t0"] + args.seconds
            syncer.start()
            go.set()

    anyio.run(agents)
    stop.set()
    syncer.join(120)
    run.seconds = time.monotonic() - started["t0"]
    run.load = (run.load[0], os.getloadavg()[0])
    return run


HEADER = ("| backend | agents | calls | calls/s | p50 ms | p95 ms | errors | leaks tenant/ACL "
          "| leaks deleted | leaks revoked | in flight | probes refused | syncs | sync p50 s |")
NAMES = {"milvus": "Milvus (one server, tools)", "memory": "memory (`ragkit mcp` per agent)",
         "memory-tools": "memory (tools, `LiveIndex`)"}
READING = (
    "Leaks are read from the responses alone: every doc id in a response's content names its tenant and "
    "group (`acme-ops-0012`), so a document outside the caller's scope is a tenant/ACL leak, and one "
    "whose deletion or revocation committed before the request was sent is a deleted/revoked leak. *In "
    "flight* counts documents whose change committed while the request was running (the response may "
    "show either version; not a leak). Errors are failed calls (transport, `internal`, "
    "`invalid_arguments`) and failed syncs; a refused probe of a deleted or revoked id (`unknown_id`) is "
    "the expected answer, not an error. Milvus agents are threads of one process (models shared); memory "
    "agents are one `ragkit mcp` process each, every process loading its own models, which on two cores "
    "dominates with 16 agents.")


def render(rows: list[dict[str, Any]], command: str, args: Any) -> str:
    """The result page: one row per (backend, N), latency per tool, and how to read them."""
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    low, high = min(r["load"][0] for r in rows), max(r["load"][1] for r in rows)
    lines = ["# Many agents at once: tool latency, errors and leaks while a sync edits, deletes and revokes",
             "",
             f"Produced by `{command}` on {when}, on the shared 2-core machine **under load** (other jobs "
             f"running; load average {low:.1f} at the start of a row to {high:.1f} at the end of one). "
             f"{args.docs} synthetic documents (3 tenants + global, ACL groups ops / finance / none), "
             f"{args.seconds:g} s per row, a sync every {args.sync_every:g} s (edit, delete, revoke to a "
             f"group no caller has, add, in turn), rerank mode `{args.rerank}`. Latency is per tool call, "
             "client side; each agent makes its calls one after another.", "",
             HEADER, "|" + "---|" * 14]
    for r in rows:
        lines.append(f"| {NAMES[r['backend']]} | {r['agents']} | {r['calls']} | {r['calls_per_s']:.1f} | "
                     f"{r['p50_ms']:.0f} | {r['p95_ms']:.0f} | {r['errors']} | {r['leaks']['tenant']} | "
                     f"{r['leaks']['deleted']} | {r['leaks']['revoked']} | {r['in_flight']} | "
                     f"{r['refused']} | {r['syncs']} | {r['sync_p50_s']:.2f} |")
    lines += ["", "Per tool (p50 / p95 ms, calls):", "",
              "| backend | agents | search_knowledge | retrieve_documents | related_documents |",
              "|---|---|---|---|---|"]
    for r in rows:
        cells = []
        for tool in TOOLS:
            p50, p95, calls = r["per_tool"].get(tool, [float("nan"), float("nan"), 0])
            cells.append(f"{p50:.0f} / {p95:.0f} ({calls})")
        lines.append(f"| {r['backend']} | {r['agents']} | " + " | ".join(cells) + " |")
    lines += ["", READING, ""]
    for r in rows:
        items = r["first_errors"] + r["first_leaks"]
        if items:
            lines += [f"First problems, {r['backend']} with {r['agents']} agents: " + "; ".join(items), ""]
    return "\n".join(lines) + "\n"


def main() -> None:
    """Run every (backend, N) row and publish the table."""
    ap = parser(__doc__, "load_agents.md")
    ap.add_argument("--backends", default="milvus,memory", help="milvus, memory (MCP), memory-tools")
    ap.add_argument("--agents", default="1,4,16")
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--max-calls", type=int, default=2000, help="per agent")
    ap.add_argument("--docs", type=int, default=240)
    ap.add_argument("--sync-every", type=float, default=1.0)
    ap.add_argument("--rerank", default="fuse", help="the funnel's rerank mode (fuse | none ...)")
    ap.add_argument("--json", type=Path, help="also write the rows as JSON here")
    args = ap.parse_args()
    command = "OMP_NUM_THREADS=1 python bench/load_agents.py " + " ".join(sys.argv[1:])
    counts = [int(x) for x in args.agents.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        folder = work / "corpus"
        ids = write_corpus(folder, args.docs)
        base_path = work / "base-index"
        sync_folder(folder, base_path, progress=False)
        base = Index.load(base_path)
        print(f"corpus: {len(ids)} documents, base index built", flush=True)
        uri = os.environ.get("RAGKIT_MILVUS_URI")
        server = start_local(work / "milvus") if "milvus" in args.backends and not uri else None
        try:
            for backend in args.backends.split(","):
                for n in counts:
                    write_corpus(folder, args.docs)  # every row starts from the same folder and index
                    if backend == "milvus":
                        run = run_milvus(uri or server.uri, folder, base, n, args)  # type: ignore[union-attr]
                    elif backend == "memory-tools":
                        run = run_memory_tools(folder, base_path, work, n, args)
                    else:
                        run = run_memory(folder, base_path, work, n, args)
                    rows.append(run.row())
                    print(json.dumps(rows[-1]), flush=True)
        finally:
            if server is not None:
                server.stop()
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    publish(args.result, render(rows, command, args))


if __name__ == "__main__":
    main()
