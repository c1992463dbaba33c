"""The OpenAPI document and its browsable page, served without any CDN."""

from fastapi.testclient import TestClient

from iam_console.api.app import api, route_table


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
