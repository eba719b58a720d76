"""Managed PostgreSQL services: how a fix that changes a server setting is applied there.

Amazon RDS (and Aurora), Google Cloud SQL and Azure Database for PostgreSQL give no superuser, and refuse
``ALTER SYSTEM``: ``max_locks_per_transaction`` (a ``PGC_POSTMASTER`` setting: a restart applies it) is set through
the service's own interface. lockscope recognises the service by the settings only it defines
(``server_facts.sql``: ``rds.extensions``, ``cloudsql.iam_authentication``, ``azure.extensions``), and every fix it
prints for one uses the service's way, as SQL comments (a ``--sql`` script stays runnable).
"""

from __future__ import annotations

__all__ = ["SERVICE_NAMES", "STANDBY_NOTE", "set_mlpt_sql"]

#: ``ServerFacts.managed_service`` -> the service's name.
SERVICE_NAMES = {"rds": "Amazon RDS / Aurora", "cloudsql": "Google Cloud SQL",
                 "azure": "Azure Database for PostgreSQL"}


#: What a max_locks_per_transaction fix means on a hot standby (``xlog.c CheckRequiredParameterValues``: recovery
#: stops when the standby's value is below the primary's, which the primary's WAL carries).
STANDBY_NOTE = ("-- this server is a hot standby: its lock table is its own (its read-only queries' locks, and the "
                "primary's AccessExclusiveLocks the startup process replays); set it here and restart the standby; "
                "it may not be below the primary's value (recovery stops: \"insufficient parameter settings\"), and "
                "the primary need not change\n")


def set_mlpt_sql(service: str, value: int, *, standby: bool = False) -> str:
    """The line(s) that set ``max_locks_per_transaction`` to ``value`` (count) on this kind of server, for a fix's
    SQL: ``ALTER SYSTEM SET ...;`` on a server lockscope does not know as a service, else the service's command as
    SQL comments (placeholders in capitals: the parameter group, instance, resource group, server).

    :param service: ``ServerFacts.managed_service``: ``""``, ``rds``, ``cloudsql`` or ``azure``.
    :param standby: the server is a hot standby (:data:`STANDBY_NOTE` first).
    """
    return (STANDBY_NOTE if standby else "") + _set_mlpt(service, value)


def _set_mlpt(service: str, value: int) -> str:
    if service == "rds":
        return ("-- Amazon RDS / Aurora: ALTER SYSTEM is refused; set it in the instance's DB parameter group (a "
                "custom one), then reboot:\n"
                "-- aws rds modify-db-parameter-group --db-parameter-group-name GROUP --parameters "
                f"\"ParameterName=max_locks_per_transaction,ParameterValue={value},ApplyMethod=pending-reboot\"\n"
                "-- aws rds reboot-db-instance --db-instance-identifier INSTANCE")
    if service == "cloudsql":
        return ("-- Google Cloud SQL: ALTER SYSTEM is refused; set the database flag (the instance restarts; "
                "--database-flags replaces the flags set before: list them all):\n"
                f"-- gcloud sql instances patch INSTANCE --database-flags=max_locks_per_transaction={value}")
    if service == "azure":
        return ("-- Azure Database for PostgreSQL (flexible server): ALTER SYSTEM is refused; set the server "
                "parameter, then restart:\n"
                "-- az postgres flexible-server parameter set --resource-group GROUP --server-name SERVER "
                f"--name max_locks_per_transaction --value {value}\n"
                "-- az postgres flexible-server restart --resource-group GROUP --name SERVER")
    return f"ALTER SYSTEM SET max_locks_per_transaction = {value};"
