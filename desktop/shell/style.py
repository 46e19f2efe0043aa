"""The shell's stylesheet (kept in Python so the package needs no data files)."""

__all__ = ["CSS"]

CSS = """
#sidebar { width: 34; border-right: solid $primary-darken-2; }
#sidebar .heading { padding: 0 1; text-style: bold; background: $boost; }
#agents { height: 1fr; border: none; }
#host-status { height: auto; padding: 0 1; color: $text-muted; }
#main { width: 1fr; }
ChatView { height: 1fr; }
#chat-title { padding: 0 1; text-style: bold; background: $boost; }
#log { height: 1fr; padding: 0 1; }
#queue { height: auto; padding: 0 1; color: $accent; display: none; }
#status-row { height: 1; padding: 0 1; }
#spinner { width: 2; color: $warning; }
#status { width: 1fr; color: $text-muted; }
#prompt { dock: bottom; }
.entry { margin: 0 0 1 0; }
.entry.user { color: $text; }
.entry.reply { color: $text; }
.entry.tool { color: $text-muted; }
.entry.approval { border: round $warning; padding: 0 1; height: auto; }
.entry.approval:focus-within { border: round $accent; }
.approval-buttons { height: auto; }
.approval-buttons Button { margin-right: 1; min-width: 12; }
MemoryView { height: 1fr; }
#facts { height: 2fr; }
#story-box { height: 1fr; border-top: solid $primary-darken-2; padding: 0 1; }
#suggestions-state { height: auto; padding: 0 1; color: $warning; }
#suggestions { height: auto; max-height: 8; }
#file-tree { width: 40; }
#file-text { width: 1fr; }
#works { width: 30; }
#work-members { height: auto; padding: 0 1; text-style: bold; }
#work-board { height: 1fr; }
#work-timeline { height: 1fr; }
.dialog { align: center middle; }
.dialog-box {
    width: 72; max-width: 100%; height: auto; max-height: 100%; overflow-y: auto;
    border: thick $primary; background: $surface; padding: 1 2;
}
/* The question wraps inside the box: a person reads all of what an irreversible step does, at 80x24 too. */
.dialog-question { width: 100%; text-style: bold; margin-bottom: 1; }
.dialog-buttons { height: auto; margin-top: 1; }
.dialog-buttons Button { margin-right: 2; }
.switch-row { height: auto; }
.switch-row Label { padding: 1 1; }
.hint { color: $text-muted; }
"""
