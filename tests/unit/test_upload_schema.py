"""The upload's schema says what the server takes (issue 27: schemathesis found `{"name": "0.md"}` schema-valid and
refused 422): exactly one of `content` and `content_base64`, a string; a .pdf or .docx as bytes; base64 that
decodes. Every instance is checked against the published JSON Schema and against the model that validates requests:
they agree."""
from __future__ import annotations

import jsonschema
import pytest
from pydantic import ValidationError

from serve.api import IngestRequest

CASES = [
    ({"name": "0.md"}, False),
    ({"name": "a.md", "content": "# A"}, True),
    ({"name": "a.md", "content": None}, False),
    ({"name": "a.md", "content": "x", "content_base64": "eA=="}, False),
    ({"name": "a.pdf", "content": "%PDF"}, False),
    ({"name": "a.pdf", "content_base64": "JVBERg=="}, True),
    ({"name": "a.docx", "content_base64": "not base64!"}, False),
    ({"name": "a.docx", "content_base64": "eA="}, False),
    ({"name": "a.txt", "content_base64": ""}, True),
]


@pytest.mark.parametrize("upload, accepted", CASES)
def test_the_schema_and_the_server_agree_on_an_upload(upload, accepted) -> None:
    schema = IngestRequest.model_json_schema()
    body = {"files": [upload]}
    try:
        jsonschema.validate(body, schema)
        schema_valid = True
    except jsonschema.ValidationError:
        schema_valid = False
    try:
        IngestRequest.model_validate(body)
        model_valid = True
    except ValidationError:
        model_valid = False
    assert (schema_valid, model_valid) == (accepted, accepted)
