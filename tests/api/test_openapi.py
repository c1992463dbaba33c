"""The OpenAPI document and its browsable page, served without any CDN."""

from fastapi.testclient import TestClient

from iam_console.api.app import api, route_table
from iam_console.core import kinds
from iam_console.core.resources import REGISTRY


def test_openapi_lists_every_api_route():
    document = TestClient(api).get("/api/openapi.json").json()
    assert document["openapi"].startswith("3.0")  # what the bundled Swagger UI 4 can render
    documented = {(method.upper(), path) for path, ops in document["paths"].items() for method in ops}
    served = {(method, path) for method, path in route_table() if path.startswith("/api/") and "{path" not in path}
    assert served <= documented
    assert ("GET", "/api/get-users") in documented and ("POST", "/api/login") in documented


def test_swagger_page_uses_local_assets():
    client = TestClient(api)
    page = client.get("/swagger")
    assert page.status_code == 200 and "/api/swagger-ui/swagger-ui-bundle.js" in page.text
    assert "cdn." not in page.text and "unpkg" not in page.text
    assert client.get("/api/swagger-ui/swagger-ui-bundle.js").status_code == 200
    assert client.get("/api/swagger-ui/swagger-ui.css").status_code == 200


def test_generic_routes_describe_their_bodies_and_answers():
    document = TestClient(api).get("/api/openapi.json").json()
    schemas = document["components"]["schemas"]
    add_ldap = document["paths"]["/api/add-ldap"]["post"]
    body = add_ldap["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/LdapInput"}
    ldap = schemas["LdapInput"]["properties"]
    # the kind's declared choices are enums (empty is unset); ldap's name travels as id
    assert ldap["passwordType"]["enum"] == ["", *kinds.choices("ldap", "passwordType")]
    assert ldap["filterFields"]["items"]["enum"] == ["", *kinds.choices("ldap", "filterFields")]
    assert ldap["port"] == {"type": "integer"} and schemas["LdapInput"]["required"] == ["owner", "id"]
    listing = document["paths"]["/api/get-users"]["get"]
    assert {"owner", "p", "pageSize", "field", "value", "sortField", "sortOrder"} <= {
        p["name"] for p in listing["parameters"]}
    ok, failed = listing["responses"]["200"]["content"]["application/json"]["schema"]["anyOf"]
    assert ok["properties"]["data"] == {"type": "array", "items": {"$ref": "#/components/schemas/User"}}
    assert set(ok["required"]) == set(failed["required"]) == {"status", "msg", "sub", "name", "data", "data2", "data3"}
    # every operation of the generic family is there, with a body for the writes
    for kind in REGISTRY.values():
        if kind.named and kind.writable:
            for verb in ("add", "update", "delete"):
                assert "requestBody" in document["paths"][f"/api/{verb}-{kind.name}"]["post"]
    form = document["paths"]["/api/set-password"]["post"]["requestBody"]["content"]
    assert {"multipart/form-data", "application/x-www-form-urlencoded", "application/json"} <= set(form)
