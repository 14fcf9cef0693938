"""CSV a user pastes or uploads (a pre-enrolment list, a competition's predictions): any
line ends are read, and text the csv module cannot read is refused with why, never a 500
(schemathesis found a lone carriage return answered 500 by the pre-enrolment route)."""

from __future__ import annotations

import csv

import pytest

from cgu_lab.controller.school_login.pre_enrolments import parse_emails
from cgu_lab.core import competition as rules
from cgu_lab.core.errors import Invalid

TOO_LONG = "x" * (csv.field_size_limit() + 1)


def test_a_pre_enrolment_list_is_read_with_any_line_ends_and_refused_when_unreadable():
    for text in (
        "email\rAda@school.test\r",
        "email\r\nada@school.test\r\n",
        "email\nada@school.test",
    ):
        assert parse_emails(text) == ["ada@school.test"]
    with pytest.raises(Invalid, match="line 2: 'ej' is not an e-mail address"):
        parse_emails("email\rej\r\uda3c:\u00e8")
    with pytest.raises(Invalid, match="not readable CSV"):
        parse_emails(f"email\n{TOO_LONG}\n")


def test_a_prediction_file_is_read_with_any_line_ends_and_refused_when_unreadable():
    for text in ("id,prediction\r1,a\r2,b\r", "id,prediction\r\n1,a\r\n2,b\r\n"):
        assert rules.read_table(text, "id", "prediction", "your file") == {"1": "a", "2": "b"}
    with pytest.raises(rules.PredictionError, match="your file is not readable CSV"):
        rules.read_table(f"id,prediction\n1,{TOO_LONG}\n", "id", "prediction", "your file")
