"""/sysinfo: CPU per core and memory, their last minute in a chart, the API's latency and
throughput per route (each table in a 300 px scroll area), the release in an about card, and
a guided tour. Polled every 2 seconds while shown (operations/ui/sysinfo_state.py)."""

from __future__ import annotations

import reflex as rx

from iam_console.operations.ui.sysinfo_state import POLL_MS, SystemInfo
from iam_console.ui.components.ticker import ticker
from iam_console.ui.components.tour import tour, tour_button
from iam_console.ui.routes import page
from iam_console.ui.state.prefs import Prefs
from iam_console.ui.text import t

SYSINFO_TOUR = (
    ("CPU usage", "How busy each core of the server's machine is, read every 2 seconds."),
    ("Memory usage", "The memory this server process holds, against the machine's total."),
    ("The last minute", "CPU and memory over the last minute, to tell a spike from a trend."),
    ("API latency and throughput",
     "For each API route: how many requests it answered, how long they took on average, and how many it answers "
     "a second now."),
    ("About", "The release this server runs, and how many commits it is ahead of it."),
)


def _core(usage: rx.Var, index: rx.Var) -> rx.Component:
    label = Prefs.tr["Core %s"].replace("%s", (index + 1).to_string())
    return rx.hstack(
        rx.text(label, size="2", width="5em"),
        rx.progress(value=usage.to(int), max=100, aria_label=label, flex="1"),
        rx.text(SystemInfo.cpu_text[index], size="2", width="4.5em", text_align="right"),
        align="center", width="100%", class_name="sysinfo-core",
    )


def _card(title: str, *children: rx.Component, id: str, **props) -> rx.Component:
    return rx.card(rx.vstack(rx.heading(t(title), size="3", as_="h2"), *children, spacing="3", width="100%"),
                   id=id, width="100%", **props)


def _table(rows: rx.Var, columns: tuple[tuple[str, str], ...], id: str, label: str) -> rx.Component:
    """A table in a 300 px scroll region that the keyboard can reach (and scroll) too."""
    return rx.box(
        rx.table.root(
            rx.table.header(rx.table.row(*[rx.table.column_header_cell(t(label)) for _, label in columns])),
            rx.table.body(rx.foreach(rows, lambda row: rx.table.row(
                *[rx.table.cell(row[key]) for key, _ in columns]))),
            size="1", width="100%",
        ),
        height="300px", overflow_y="auto", tab_index=0, role="region", aria_label=t(label), id=id,
    )


def _history() -> rx.Component:
    return rx.recharts.line_chart(
        rx.recharts.line(data_key="cpu", name=t("CPU usage (%)"), stroke="#5470c6", dot=False,
                         is_animation_active=False),
        rx.recharts.line(data_key="memory", name=t("Memory of this process (%)"), stroke="#3ba272", dot=False,
                         is_animation_active=False),
        rx.recharts.cartesian_grid(stroke_dasharray="3 3"),
        rx.recharts.x_axis(data_key="time"),
        rx.recharts.y_axis(domain=[0, 100]),
        rx.recharts.graphing_tooltip(),
        rx.recharts.legend(),
        data=SystemInfo.history, width="100%", height=260,
    )


def _about() -> rx.Component:
    return _card(
        "About",
        rx.text(t("An open-source identity and access management server with its admin console."), size="2"),
        rx.data_list.root(
            rx.data_list.item(rx.data_list.label(t("Version")),
                              rx.data_list.value(SystemInfo.version, id="sysinfo-version")),
            rx.data_list.item(rx.data_list.label(t("Commit")),
                              rx.data_list.value(rx.code(SystemInfo.commit), id="sysinfo-commit")),
            size="2",
        ),
        id="sysinfo-about",
    )


@page("/sysinfo", "System Info", on_load=SystemInfo.load)
def sysinfo() -> rx.Component:
    figures = rx.vstack(
        rx.grid(
            _card("CPU usage", rx.foreach(SystemInfo.cpu, _core), id="sysinfo-cpu"),
            _card("Memory usage",
                  rx.progress(value=SystemInfo.memory_percent.to(int), max=100, aria_label=t("Memory usage")),
                  rx.text(SystemInfo.memory_text, size="2", id="sysinfo-memory-text"),
                  # what the figures are: this process's resident memory, of the machine's total
                  rx.text(t("This server process, of the machine's total memory"), size="1", color_scheme="gray",
                          id="sysinfo-memory-caption"),
                  id="sysinfo-memory"),
            columns=rx.breakpoints(initial="1", md="2"), gap="1em", width="100%",
        ),
        _card("The last minute", rx.box(_history(), width="100%"), id="sysinfo-history"),
        rx.grid(
            _card("API latency", _table(SystemInfo.latency, (("name", "Name"), ("method", "Method"),
                                                             ("count", "Count"), ("latency", "Latency (ms)")),
                                        "sysinfo-latency-table", "API latency"), id="sysinfo-latency"),
            _card("API throughput",
                  _table(SystemInfo.throughput, (("name", "Name"), ("method", "Method"),
                                                 ("throughput", "Throughput (requests a second)")),
                         "sysinfo-throughput-table", "API throughput"),
                  rx.text(Prefs.tr["Total throughput: %s"].replace("%s", SystemInfo.total_throughput), size="2",
                          id="sysinfo-total-throughput"),
                  id="sysinfo-throughput"),
            columns=rx.breakpoints(initial="1", md="2"), gap="1em", width="100%",
        ),
        spacing="4", width="100%",
    )
    return rx.vstack(
        rx.hstack(rx.heading(t("System Info"), size="5"), rx.spacer(), tour_button(SystemInfo),
                  align="center", width="100%"),
        rx.cond(SystemInfo.error != "",
                rx.callout(SystemInfo.error, icon="triangle-alert", color_scheme="red", id="sysinfo-error")),
        rx.cond(SystemInfo.ready, figures, rx.text(t("Loading..."), color_scheme="gray")),
        _about(),
        ticker(POLL_MS, SystemInfo.tick),
        tour(SystemInfo, SYSINFO_TOUR),
        spacing="4", width="100%",
    )
