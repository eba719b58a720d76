-- Every cast (pg_cast), for typing a statement's $n on the client as parse_coerce.c find_coercion_pathway does:
-- context i (implicit), a (assignment), e (explicit); method f (function), i (I/O), b (binary). No parameter.
SELECT c.castsource::int8 AS source,
       c.casttarget::int8 AS target,
       c.castcontext::text AS context,
       c.castmethod::text AS method
FROM pg_catalog.pg_cast c
