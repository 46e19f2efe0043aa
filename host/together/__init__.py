"""host.together: agents together: inboxes that queue every run, durable requests that always end, teammate
tools, and Works (a shared room with a timeline, a task board, handoffs, its own memory and files).

`Together` is the one part the host wires in; the modules hold one concept each (inbox, delivery,
requests, asks, peers, peer_view, board, works, work_service, work_tools, work_runs, private_memory).
"""

from host.together.asks import RequestDesk
from host.together.board import Board, StaleRevisionError
from host.together.clock import Clock, SystemClock
from host.together.delivery import Deliveries
from host.together.inbox import Inbox, InboxItem
from host.together.peers import PeerTools, chain_refusal
from host.together.private_memory import PrivateMemoryTools
from host.together.requests import Request, RequestBook
from host.together.together import Together
from host.together.work_service import WorkService
from host.together.works import Work, WorkStore

__all__ = [
    "Board",
    "Clock",
    "Deliveries",
    "Inbox",
    "InboxItem",
    "PeerTools",
    "PrivateMemoryTools",
    "Request",
    "RequestBook",
    "RequestDesk",
    "StaleRevisionError",
    "SystemClock",
    "Together",
    "Work",
    "WorkService",
    "WorkStore",
    "chain_refusal",
]
