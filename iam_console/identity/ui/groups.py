"""Groups: the list at /groups and the edit page, and the group tree
of an organization with the users of the selected group.

The tree reads the organization's groups (they are few); the users beside it
are the users list (one page at a time) filtered by the group in the service
layer (get-users' groupName)."""

from __future__ import annotations

from urllib.parse import quote, unquote

import reflex as rx

from iam_console.core import crud, defaults, lookup
from iam_console.core.kinds import choices
from iam_console.identity import groups, users
from iam_console.identity.ui.users import USERS
from iam_console.ui.components.dialogs import confirm
from iam_console.ui.components.listing import list_page
from iam_console.ui.routes import page
from iam_console.ui.screens import Column, Field, Screen, screen
from iam_console.ui.state.account import Account
from iam_console.ui.state.editing import _id_from_path
from iam_console.ui.state.listing import Lists
from iam_console.ui.state.prefs import Prefs
from iam_console.ui.state.service import audit_request, call, say
from iam_console.ui.text import t

MEMBERS_SHOWN = 20


def _parent_link(record) -> str:
    """The organization for a top group, else the parent group."""
    owner = quote(str(record.get("owner", "")), safe="")
    if record.get("isTopGroup") or record.get("parentId") in ("", record.get("owner")):
        return f"/organizations/{owner}"
    return f"/groups/{owner}/{quote(str(record.get('parentId', '')), safe='')}"


def _parent_choices(db, actor, record) -> list[tuple[str, str]]:
    """The organization itself and its other groups (never one below this one)."""
    owner, name = record["owner"], record["name"]
    organization = lookup.organization(db, owner)
    below = groups.descendants(db, owner, name)
    return [(owner, (organization.display_name if organization else "") or owner)] + [
        (group, label or group) for group, label in groups.choices(db, actor, owner)
        if group != name and group not in below]


class GroupMembers(rx.State):
    """The first users of the group on its edit page (read-only)."""

    member_ids: list[str] = []
    tree_url: str = ""

    @rx.event
    async def load(self):
        owner, name = _id_from_path(GROUPS, self.router.url.path)
        self.tree_url = f"/trees/{quote(owner, safe='')}/{quote(name, safe='')}"
        members = await call(self, lambda db, actor: groups.members(db, actor, owner, name, MEMBERS_SHOWN))
        self.member_ids = [] if members.failed else members.value


GROUPS = screen(Screen(
    key="group", title="Groups", list_route="/groups", edit_route="/groups/{owner}/{name}",
    # Delete is disabled for a group with children (the service refuses it too)
    protected=lambda record, me: bool(record.get("haveChildren")),
    edit_title="Group", after_read=GroupMembers.load, parts=lambda: (_members(),),
    columns=(
        Column("name", "Name", link="/groups/{owner}/{name}"),
        Column("owner", "Organization", link="/organizations/{owner}"),
        Column("createdTime", "Created time", "time", searchable=False),
        Column("updatedTime", "Updated time", "time", searchable=False),
        Column("displayName", "Display name"),
        Column("type", "Type", filters=choices("group", "type")),
        Column("parentId", "Parent group", link=_parent_link),
        # the members are a paged list of their own, never loaded into this one
        Column("users", "Users", caption="View users", link="/trees/{owner}/{name}", sortable=False,
               searchable=False),
    ),
    fields=(
        Field("displayName", "Display name"),
        Field("type", "Type", "select", options=choices("group", "type")),
        Field("parentId", "Parent group", "select", choices=_parent_choices),
        Field("isEnabled", "Is enabled", "switch"),
    ),
))


def _members() -> rx.Component:
    return rx.grid(
        rx.text(t("Users"), size="2", weight="medium", padding_top="0.2em"),
        rx.vstack(
            rx.hstack(
                rx.foreach(GroupMembers.member_ids, lambda member: rx.link(
                    rx.badge(member, variant="soft"), href="/users/" + member)),
                rx.cond(GroupMembers.member_ids.length() == 0, rx.text(t("No users"), size="2", color_scheme="gray")),
                wrap="wrap", spacing="2", id="group-members",
            ),
            rx.link(t("View users"), href=GroupMembers.tree_url, size="2", id="group-members-all"),
            spacing="2",
        ),
        columns="12em 1fr", spacing="3", width="100%",
    )


# --- the tree ---

def _tree_scope(path: str) -> tuple[str, str]:
    """(organization, group) of /trees/{org} and /trees/{org}/{group}."""
    parts = [unquote(p) for p in path.split("/") if p]
    if parts[:1] == ["trees"] and len(parts) in (2, 3):
        return parts[1], parts[2] if len(parts) == 3 else ""
    return "", ""


def _tree_url(organization: str, group: str = "") -> str:
    url = f"/trees/{quote(organization, safe='')}"
    return f"{url}/{quote(group, safe='')}" if group else url


class GroupTree(rx.State):
    tree_organization: str = ""
    tree_group: str = ""  # the selected group; "" shows every user of the organization
    nodes: list[dict[str, str]] = []
    deleting: str = ""  # the group waiting for the confirmation
    removing: str = ""  # owner/name of the user waiting for the confirmation
    removing_label: str = ""

    @rx.event
    async def load(self):
        self.deleting = self.removing = self.removing_label = ""
        return await self._load_tree()

    async def _load_tree(self):
        organization, group = _tree_scope(self.router.url.path)

        def read(db, actor):
            return None if lookup.organization(db, organization) is None else groups.tree(db, actor, organization)

        nodes = await call(self, read, forbidden_page=True)
        if nodes.failed:
            return nodes.event
        if nodes.value is None:
            return rx.redirect("/404")
        self.tree_organization, self.tree_group = organization, group
        self.nodes = [{
            "name": node.name, "title": node.display_name or node.name, "type": node.type or "Virtual",
            "indent": f"{node.depth * 1.25}em", "leaf": "false" if node.have_children else "true",
            "href": _tree_url(organization, node.name),
            "edit": f"/groups/{quote(organization, safe='')}/{quote(node.name, safe='')}?returnUrl="
                    + quote(_tree_url(organization, node.name), safe="/"),
        } for node in nodes.value]
        if group and all(node.name != group for node in nodes.value):
            return rx.redirect(_tree_url(organization))

    @rx.event
    def switch_organization(self, organization: str):
        return rx.redirect(_tree_url(organization))

    @rx.event
    async def add_group(self, parent: str):
        """Add top-level group ("") or add a child of `parent`: created, then opened in add mode."""
        organization, request = self.tree_organization, await audit_request(self)

        def add(db, actor):
            record = defaults.new_record(db, actor, "group", organization)
            if parent:
                record["parentId"], record["isTopGroup"] = parent, False
            crud.add_record(db, actor, GROUPS.kind, record, request)
            return record

        added = await call(self, add, failed="Failed to add: %s")
        if added.failed:
            return added.event
        back = quote(_tree_url(organization, self.tree_group), safe="/")
        return [rx.toast.success(await say(self, "Successfully added")),
                rx.redirect(f"{GROUPS.edit_url(added.value)}?mode=add&returnUrl={back}")]

    @rx.event
    def ask_delete(self, name: str):
        self.deleting = name

    @rx.event
    def cancel(self):
        self.deleting = self.removing = self.removing_label = ""

    @rx.event
    async def confirm_delete(self):
        name, self.deleting = self.deleting, ""
        request = await audit_request(self)
        gone = await call(self, lambda db, actor: crud.delete_record(db, actor, GROUPS.kind, self.tree_organization,
                                                                     name, request), failed="Failed to delete: %s")
        if gone.failed:
            return gone.event
        toast = rx.toast.success(await say(self, "Successfully deleted"))
        if name == self.tree_group:
            return [toast, rx.redirect(_tree_url(self.tree_organization))]
        await self._load_tree()
        return toast

    @rx.event
    def ask_remove(self, key: str, label: str):
        self.removing, self.removing_label = key, label

    @rx.event
    async def confirm_remove(self):
        """Take the user out of the selected group (remove-from-group)."""
        key, self.removing, self.removing_label = self.removing, "", ""
        owner, _, name = key.partition("/")
        removed = await call(self, lambda db, actor: users.remove_from_group(db, actor, owner, name, self.tree_group),
                             failed="Failed to remove: %s")
        if removed.failed:
            return removed.event
        await (await self.get_state(GroupUsers))._reload_after_removal()
        return rx.toast.success(await say(self, "Successfully removed"))


class GroupUsers(Lists, rx.State):
    """The users beside the tree: the organization's, or the selected group's (a user
    added here starts in that group)."""

    scope_group: str = ""

    @rx.event
    async def open(self):
        organization, self.scope_group = _tree_scope(self.router.url.path)
        self._start("user", organization)
        return await self._refresh()

    def _scope_params(self) -> dict[str, str]:
        return {"groupName": self.scope_group} if self.scope_group else {}

    def _new_fields(self, owner: str) -> dict:
        return {"groups": [f"{owner}/{self.scope_group}"]} if self.scope_group else {}


def _node(node: rx.Var) -> rx.Component:
    selected = node["name"] == GroupTree.tree_group
    actions = rx.hstack(
        rx.tooltip(rx.icon_button(rx.icon("plus", size=14), size="1", variant="ghost",
                                  on_click=GroupTree.add_group(node["name"]), id="tree-add-child",
                                  aria_label=t("New Group")),
                   content=t("New Group")),
        rx.link(rx.icon_button(rx.icon("pencil", size=14), size="1", variant="ghost", id="tree-edit",
                               aria_label=t("Edit")),
                href=node["edit"]),
        rx.cond(node["leaf"] == "true",
                rx.icon_button(rx.icon("trash-2", size=14), size="1", variant="ghost", color_scheme="red",
                               on_click=GroupTree.ask_delete(node["name"]), id="tree-delete",
                               aria_label=t("Delete"))),
        spacing="1",
    )
    icon = rx.cond(node["type"] == "Physical", rx.icon("building-2", size=14), rx.icon("cloud", size=14))
    return rx.hstack(
        rx.box(width=node["indent"], flex_shrink="0"),
        icon,
        rx.link(node["title"], href=node["href"], size="2", weight=rx.cond(selected, "bold", "regular"),
                underline="none"),
        rx.spacer(),
        rx.cond(selected, actions),
        align="center", spacing="2", width="100%", padding_x="0.4em", padding_y="0.2em", border_radius="4px",
        background=rx.cond(selected, "var(--accent-a4)", "transparent"),
        class_name="tree-node", custom_attrs={"data-name": node["name"], "data-type": node["type"],
                                              "data-selected": rx.cond(selected, "true", "false")},
    )


def _remove_action(row: rx.Var) -> list[rx.Component]:
    return [rx.cond(
        GroupUsers.scope_group != "",
        rx.button(t("Remove"), size="1", color_scheme="orange", variant="soft",
                  disabled=row["__protected"] == "true", on_click=GroupTree.ask_remove(row["__key"], row["name"])),
    )]


def _tree_page() -> rx.Component:
    selector = rx.cond(
        Account.is_global_admin,
        rx.select.root(
            rx.select.trigger(id="tree-organization", width="100%", aria_label=t("Organization")),
            rx.select.content(rx.foreach(Account.organization_names,
                                         lambda name: rx.select.item(name, value=name))),
            value=GroupTree.tree_organization, on_change=GroupTree.switch_organization,
        ),
        rx.text(GroupTree.tree_organization, weight="bold"),
    )
    tree = rx.card(rx.vstack(
        selector,
        rx.hstack(
            rx.link(rx.button(t("Show all"), size="1", variant=rx.cond(GroupTree.tree_group == "", "solid", "soft"),
                              id="tree-show-all"), href="/trees/" + GroupTree.tree_organization),
            rx.button(rx.icon("plus", size=14), t("Add top-level group"), size="1", variant="soft",
                      on_click=GroupTree.add_group(""), id="tree-add-top"),
            spacing="2", wrap="wrap",
        ),
        rx.vstack(rx.foreach(GroupTree.nodes, _node), spacing="0", width="100%", id="group-tree"),
        spacing="3", width="100%",
    ), width="20em", flex_shrink="0")
    return rx.hstack(
        tree,
        rx.box(list_page(USERS, row_actions=_remove_action, state=GroupUsers), flex="1", min_width="0"),
        confirm(Prefs.tr["Sure to delete: %s ?"].replace("%s", GroupTree.deleting), on_ok=GroupTree.confirm_delete,
                on_cancel=GroupTree.cancel, open_=GroupTree.deleting != "", ident="tree-delete"),
        confirm(Prefs.tr["Sure to remove: %s ?"].replace("%s", GroupTree.removing_label),
                on_ok=GroupTree.confirm_remove, on_cancel=GroupTree.cancel, open_=GroupTree.removing != "",
                ident="remove"),
        align="start", spacing="4", width="100%",
    )


page("/trees/[p0]", "Groups", on_load=[GroupTree.load, GroupUsers.open])(_tree_page)
page("/trees/[p0]/[p1]", "Groups", on_load=[GroupTree.load, GroupUsers.open])(_tree_page)
