"""lockscope as a monitoring role (issue 39): a role with ``pg_monitor`` and nothing else. What a privilege stops is
said with the exact GRANT that lifts it; the GRANT given, the same command works."""

from __future__ import annotations

import json

import psycopg

from lockscope.server import ScratchServer

from .helpers import one_line_error, run


def test_footprint_denied_names_the_grant_that_lifts_it() -> None:
    with ScratchServer() as server:
        with psycopg.connect(server.conninfo(), autocommit=True) as conn:
            conn.execute("CREATE TABLE comments (id int PRIMARY KEY, post_id int)")
            conn.execute("CREATE INDEX ON comments (post_id)")
            conn.execute("CREATE ROLE mon LOGIN IN ROLE pg_monitor")
        dsn = server.conninfo().replace("user=postgres", "user=mon")
        sql = "select * from comments where post_id = 4242 order by id limit 20"
        proc = run("footprint", "--dsn", dsn, sql)
        assert proc.returncode == 3, proc.stderr
        line = one_line_error(proc)
        assert "42501: permission denied for table comments" in line
        assert "GRANT SELECT ON TABLE comments TO mon;" in line
        with psycopg.connect(server.conninfo(), autocommit=True) as conn:
            conn.execute("GRANT SELECT ON TABLE comments TO mon")  # the GRANT the line names
        granted = run("footprint", "--dsn", dsn, sql, "--json", "-")
        superuser = run("footprint", "--dsn", server.conninfo(), sql, "--json", "-")
        assert granted.returncode == 0 == superuser.returncode, granted.stderr
        locks = [sorted(r["relation"] for r in json.loads(p.stdout)["runs"][0]["executions"][0]["relations"])
                 for p in (granted, superuser)]
        assert locks[0] == locks[1] == ["public.comments", "public.comments_pkey", "public.comments_post_id_idx"]
