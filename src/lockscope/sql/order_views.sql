-- The stored query of views (their _RETURN rule's action, the node text rewriteHandler.c ApplyRetrieveRule
-- expands) and whether each is a security_barrier view. Parameter: array of view OIDs.
SELECT r.ev_class::int8                   AS view_oid,
       r.ev_action::text                  AS ev_action,
       coalesce(EXISTS (SELECT 1 FROM unnest(c.reloptions) o
                        WHERE o ~* '^security_barrier=(true|on|yes|1)$'), false) AS security_barrier
FROM pg_catalog.pg_rewrite r
JOIN pg_catalog.pg_class c ON c.oid = r.ev_class
WHERE r.ev_class = ANY(%s::oid[]) AND r.rulename = '_RETURN'
