"""The fake API server the cache filler (lib/filler/) syncs from, loaded
with generated cluster objects (sync_e2e.py through `topoassign cache sync`,
filler_e2e.py through filler_driver), and the cache file read back."""

import sqlite3

from harness.fakeapi import FakeApiEnv

ALL_OPS = {"pod_update": 0.4, "pod_delete": 0.15, "pod_create": 0.15, "pod_pending": 0.1,
           "node_label": 0.1, "job_update": 0.1}


class FillerEnv(FakeApiEnv):
    """One fake API server (TLS, token file) with its kubeconfig, a cache
    path, and the program under test (bin)."""

    PREFIX = "topo-filler-e2e-"
    TOKEN = "sync-token-1"
    TOKEN_EOL = "\n"
    REQUEST_TIMEOUT = 120
    ADMIN_TIMEOUT = 300
    TOKEN_FILE_RELATIVE = False

    def __init__(self, program, keep):
        self.bin = program
        super().__init__(keep)
        self.db = self.path("topo.db")

    def server_args(self):
        # Bookmarks every 60 s: none in a case, so stats.events counts churn only.
        return [*super().server_args(), "--bookmark-interval", "60", "--history", "400000"]

    # -------------------------------------------------------------- the fake server

    def stats(self):
        return self.admin("stats")

    def index(self, kind, rv=None):
        return self.admin(f"index?resource={kind}" + (f"&rv={rv}" if rv is not None else ""))

    def bulk(self, nodes, pods, jobs, **extra):
        out = self.admin("bulk", dict(nodes=nodes, pods=pods, jobs=jobs, **extra))
        return out

    def churn(self, count, mix=None, seed=1, **extra):
        return self.admin("churn", dict(count=count, mix=mix or ALL_OPS, seed=seed, **extra))


# =================================================================== the cache file

def open_ro(db):
    return sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)


def read_cache(db):
    """The rows that mirror the server, in one read transaction."""
    con = open_ro(db)
    try:
        con.execute("BEGIN")
        out = {
            "nodes": {r[0]: {"name": r[0], "rv": r[1]}
                      for r in con.execute("SELECT name, resource_version FROM nodes")},
            "pods": {r[0]: {"namespace": r[1], "name": r[2], "nodeName": r[3], "phase": r[4],
                            "rv": r[5]}
                     for r in con.execute("SELECT uid, namespace, name, node_name, phase, "
                                          "resource_version FROM pods")},
            "jobs": {r[0]: {"namespace": r[1], "name": r[2], "rv": r[3]}
                     for r in con.execute("SELECT uid, namespace, name, resource_version "
                                          "FROM jobs")},
            "watch": dict(con.execute("SELECT kind, resource_version FROM watch_state")),
        }
        out["pod_names"] = [r for r in con.execute(
            "SELECT namespace, name, count(*) FROM pods GROUP BY namespace, name "
            "HAVING count(*) > 1")]
        con.execute("COMMIT")
        return out
    finally:
        con.close()
