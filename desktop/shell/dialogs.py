"""Modal dialogs of the shell: confirm, ask for a line of text, a new agent, an agent's settings, a lost host.

Each is a `ModalScreen` whose result is what the person chose (None for cancel); every button has a key.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Switch

from protocol.models.agents import AgentInfo

__all__ = ["ConfirmDialog", "TextDialog", "AgentDialog", "HostLostDialog"]

PROVIDERS = [("local (embedded, tiny)", "local"), ("OpenAI-compatible", "openai"), ("Anthropic", "anthropic")]
PERMISSIONS = [("ask me", "ask"), ("always allow", "always"), ("never allow", "never")]


def _steady(field: Input) -> Input:
    field.cursor_blink = False
    return field


class ConfirmDialog(ModalScreen[bool]):
    """A yes/no question; `y` confirms, `n` or escape cancels. An `option` is a switch beside it (`s` turns it);
    the caller reads `option_on` once the question is answered."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
        Binding("s", "toggle_option", "Option", show=False),
    ]

    def __init__(self, question: str, yes: str = "Yes", option: str | None = None) -> None:
        super().__init__(classes="dialog")
        self._question = question
        self._yes = yes
        self._option = option
        self.option_on = False

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog-box"):
            yield Label(self._question, classes="dialog-question")
            if self._option is not None:
                with Horizontal(classes="switch-row"):
                    yield Switch(False, id="option")
                    yield Label(f"{self._option} (s)")
            with Horizontal(classes="dialog-buttons"):
                yield Button(f"{self._yes} (y)", variant="error", id="yes")
                yield Button("Cancel (n)", id="no")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)

    def on_switch_changed(self, event: Switch.Changed) -> None:
        self.option_on = event.value

    def action_toggle_option(self) -> None:
        if self._option is not None:
            switch = self.query_one("#option", Switch)
            switch.value = not switch.value


class TextDialog(ModalScreen[str | None]):
    """One line of text; enter accepts, escape cancels."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, question: str, value: str = "", placeholder: str = "") -> None:
        super().__init__(classes="dialog")
        self._question = question
        self._value = value
        self._placeholder = placeholder

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog-box"):
            yield Label(self._question, classes="dialog-question")
            yield _steady(Input(value=self._value, placeholder=self._placeholder, id="text"))
            yield Label("enter to accept, escape to cancel", classes="hint")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)


class AgentDialog(ModalScreen[dict[str, Any] | None]):
    """A new agent (name and model) or an agent's settings (model, memory, knowledge, tool permission).

    The result is `agent.create` / `agent.update` params without the agent id.
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel"), Binding("ctrl+s", "save", "Save")]

    def __init__(self, agent: AgentInfo | None = None) -> None:
        super().__init__(classes="dialog")
        self._agent = agent

    def compose(self) -> ComposeResult:
        agent = self._agent
        model = agent.settings.model if agent is not None else None
        provider = model.provider if model is not None and model.provider != "scripted" else "local"
        with Vertical(classes="dialog-box"):
            yield Label("New agent" if agent is None else f"Settings of {agent.name}", classes="dialog-question")
            if agent is None:
                yield Label("Name")
                yield _steady(Input(placeholder="e.g. Researcher", id="name"))
            if model is not None and model.provider == "scripted":
                yield Label("Model: scripted (set by a test or a script; choosing one below replaces it)")
            yield Label("Model provider")
            yield Select(PROVIDERS, value=provider, allow_blank=False, id="provider")
            yield Label("Model name (for OpenAI-compatible and Anthropic)")
            yield _steady(Input(value=model.name if model else "", placeholder="e.g. gpt-4o-mini", id="model"))
            yield Label("Server URL (optional, e.g. http://localhost:11434/v1 for Ollama)")
            yield _steady(Input(value=(model.base_url or "") if model else "", id="base-url"))
            if agent is not None:
                with Horizontal(classes="switch-row"):
                    yield Switch(value=agent.settings.memory, id="memory")
                    yield Label("Memory on")
                    # Beside memory, not below it: the dialog keeps its buttons on an 80x24 screen.
                    yield Switch(value=agent.settings.knowledge, id="knowledge")
                    yield Label("Knowledge on")
                yield Label("Tools that need a yes")
                yield Select(PERMISSIONS, value=agent.settings.tool_permission, allow_blank=False, id="permission")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Save (ctrl+s)", variant="primary", id="save")
                yield Button("Cancel (esc)", id="cancel")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "save":
            self.action_save()
        else:
            self.dismiss(None)

    def on_input_submitted(self, _: Input.Submitted) -> None:
        self.action_save()

    def action_cancel(self) -> None:
        self.dismiss(None)

    def _model(self) -> dict[str, Any] | None:
        provider = self.query_one("#provider", Select).value
        name = self.query_one("#model", Input).value.strip()
        base_url = self.query_one("#base-url", Input).value.strip()
        current = self._agent.settings.model if self._agent is not None else None
        if current is not None and current.provider == "scripted" and provider == "local" and not name:
            return None  # the person left the scripted model alone
        model: dict[str, Any] = {"provider": provider}
        if name:
            model["name"] = name
        if base_url:
            model["baseUrl"] = base_url
        return model

    def action_save(self) -> None:
        settings: dict[str, Any] = {}
        model = self._model()
        if model is not None:
            settings["model"] = model
        if self._agent is None:
            name = self.query_one("#name", Input).value.strip()
            if not name:
                self.notify("give the agent a name", severity="warning")
                return
            self.dismiss({"name": name, "settings": settings})
            return
        settings["memory"] = self.query_one("#memory", Switch).value
        settings["knowledge"] = self.query_one("#knowledge", Switch).value
        settings["toolPermission"] = self.query_one("#permission", Select).value
        self.dismiss({"settings": settings})


class HostLostDialog(ModalScreen[bool]):
    """The host went away: restart it (r) or quit (q)."""

    BINDINGS = [Binding("r", "answer(True)", "Restart"), Binding("q,escape", "answer(False)", "Quit")]

    def __init__(self, reason: str) -> None:
        super().__init__(classes="dialog")
        self._reason = reason

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog-box"):
            yield Label(f"The host stopped: {self._reason}.", classes="dialog-question")
            yield Label("Your agents and their memory are safe on disk. Restart the host to go on.")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Restart (r)", variant="primary", id="restart")
                yield Button("Quit (q)", id="quit")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "restart")

    def action_answer(self, restart: bool) -> None:
        self.dismiss(restart)
