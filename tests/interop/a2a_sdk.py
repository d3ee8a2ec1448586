"""Drive `world serve`'s A2A surface with the official A2A Python SDK.

Usage: python a2a_sdk.py BASE_URL TOKEN CARD_PATH MESSAGE_ID [poll]
  CARD_PATH /.well-known/agent-card.json (v1.0 card) or /.well-known/agent.json (legacy card,
  which the SDK reads as A2A v0.3).
  poll: the SDK's polling mode (it sends returnImmediately); `get` is then the task once it
  has left SUBMITTED/WORKING, `polled` the states GetTask showed on the way.

Prints one JSON object with what the SDK saw; tests/sdk_interop.rs checks it. An SDK exception
on a call that must work propagates (exit 1).
"""

import asyncio
import json
import sys

import httpx
from a2a.client import ClientConfig, create_client
from a2a.types import CancelTaskRequest, GetTaskRequest, Message, Part, Role, SendMessageRequest
from google.protobuf import json_format, struct_pb2


def data_part(obj):
    v = struct_pb2.Value()
    json_format.ParseDict(obj, v)
    return Part(data=v)


async def drive(base, token, card_path, message_id, polling):
    out = {}
    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    client = await create_client(
        base,
        client_config=ClientConfig(streaming=False, polling=polling, httpx_client=http),
        relative_card_path=card_path,
        resolver_http_kwargs={"headers": {"Authorization": f"Bearer {token}"}},
    )
    meta = struct_pb2.Struct()
    meta.update({"skill_id": "echo"})
    req = SendMessageRequest(
        message=Message(message_id=message_id, role=Role.ROLE_USER, parts=[data_part({"sdk": 1})]),
        metadata=meta,
    )
    task = None
    async for ev in client.send_message(req):
        which = ev.WhichOneof("payload") if hasattr(ev, "WhichOneof") else None
        resp = ev
        if isinstance(ev, tuple):
            resp = ev[0]
        if resp.HasField("task"):
            task = resp.task
        out.setdefault("events", []).append(which)
    if task is None:
        raise SystemExit("send_message returned no task")
    out["task"] = json_format.MessageToDict(task)
    got = await client.get_task(GetTaskRequest(id=task.id))
    if polling:
        out["polled"] = []
        deadline = asyncio.get_running_loop().time() + 20
        while True:
            state = json_format.MessageToDict(got)["status"]["state"]
            if not out["polled"] or out["polled"][-1] != state:
                out["polled"].append(state)
            if state not in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"):
                break
            if asyncio.get_running_loop().time() > deadline:
                raise SystemExit(f"task {task.id} never settled: {out['polled']}")
            await asyncio.sleep(0.01)
            got = await client.get_task(GetTaskRequest(id=task.id))
    out["get"] = json_format.MessageToDict(got)
    try:
        await client.cancel_task(CancelTaskRequest(id=task.id))
        out["cancel"] = None
    except Exception as e:  # the SDK raises a typed A2A error (TaskNotCancelableError)
        out["cancel"] = {"error": type(e).__name__, "message": str(e)}
    await client.close()
    await http.aclose()
    return out


def main():
    base, token, card_path, message_id = sys.argv[1:5]
    polling = sys.argv[5:6] == ["poll"]
    print(json.dumps(asyncio.run(drive(base, token, card_path, message_id, polling))))


if __name__ == "__main__":
    main()
