"""How modelled parse analysis stops: for a reason of parameter typing (lockscope refuses the statement), or for
another reason the server would report itself (lockscope lets the server say it)."""

from __future__ import annotations

__all__ = ["TYPING_SQLSTATES", "AnalysisStop", "OtherServerError", "TypingFailure"]

#: The SQLSTATEs parse analysis raises when it cannot give a parameter a type, gives it two, or the types the
#: parameters got do not fit where they stand: 42P18 indeterminate_datatype (``postgres.c
#: pg_analyze_and_rewrite_varparams``: a ``$n`` left unknown or never used), 42P08 ambiguous_parameter
#: (``parse_param.c``: inconsistent types deduced, or an occurrence left unknown while another was typed), 42725
#: ambiguous_function (``parse_func.c func_select_candidate`` / ``parse_oper.c oper_select_candidate`` could not
#: choose among candidates), 42804 datatype_mismatch (``parse_coerce.c``: a polymorphic argument with only unknown
#: inputs, types of different categories in a UNION/CASE/VALUES, an assignment or condition of the wrong type --
#: with parameters, the type one context gave them meeting another). Other errors (an operator or function that
#: does not exist, a missing relation or column) are the server's to report.
TYPING_SQLSTATES = frozenset({"42P18", "42P08", "42725", "42804"})


class AnalysisStop(Exception):
    """Parse analysis of the modelled statement stops here (as the server's would, with this error)."""

    def __init__(self, sqlstate: str, message: str) -> None:
        super().__init__(f"{sqlstate}: {message}")
        self.sqlstate = sqlstate
        self.message = message


class TypingFailure(AnalysisStop):
    """The server would refuse the statement for a reason of parameter typing (one of :data:`TYPING_SQLSTATES`)."""


class OtherServerError(AnalysisStop):
    """The server would refuse the statement for another reason (an operator that does not exist, a column
    missing, ...): not lockscope's to refuse for parameter typing."""
