"""The intro's and the README's way of opening the chapters works: JupyterLab from .venv.

Starts ``jupyter lab`` headless on 127.0.0.1 as the instructions say, checks that it serves
/lab, opens chapter 1 in a session as JupyterLab would, and runs every code cell of the chapter
through that session's kernel over the server's websocket, as the browser would.
"""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import nbformat
import pytest
import websocket  # websocket-client, a dependency of JupyterLab

from tools.toc import ROOT

TOKEN = uuid.uuid4().hex
CHAPTER = "01_attention_intuition.ipynb"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url, data=None, method=None):
    request = urllib.request.Request(url, data=data, method=method,
                                     headers={"Authorization": f"token {TOKEN}",
                                              "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, response.read()


@pytest.fixture(scope="module")
def lab():
    lab_command = Path(sys.executable).with_name("jupyter")
    assert lab_command.exists(), "the set-up installs no Jupyter: pin jupyterlab in requirements"
    port = free_port()
    command = [str(lab_command), "lab", "chapters/", "--no-browser", "--ip=127.0.0.1",
               f"--port={port}", f"--IdentityProvider.token={TOKEN}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # CI runs as root; readers do not
        command.append("--allow-root")
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            if process.poll() is not None:
                pytest.fail(f"jupyter lab exited: {process.stderr.read()[-2000:]}")
            try:
                get(f"{base}/api/status")
                break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("jupyter lab did not answer on 127.0.0.1 within 60 s")
        yield base
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_lab_serves_its_page(lab):
    status, body = get(f"{lab}/lab")
    assert status == 200 and b"JupyterLab" in body


def execute(ws, session_id, code):
    """Send one execute_request; return (status, text printed, error name or None)."""
    msg_id = uuid.uuid4().hex
    ws.send(json.dumps({
        "header": {"msg_id": msg_id, "username": "test", "session": session_id,
                   "msg_type": "execute_request", "version": "5.3"},
        "parent_header": {}, "metadata": {}, "channel": "shell",
        "content": {"code": code, "silent": False, "store_history": True,
                    "user_expressions": {}, "allow_stdin": False, "stop_on_error": True}}))
    # The reply (shell channel) may come before the printed text (iopub channel); the kernel
    # is done with a request when both the reply and its iopub "idle" status have come.
    printed, error, status, idle = [], None, None, False
    while status is None or not idle:
        msg = json.loads(ws.recv())
        if msg.get("parent_header", {}).get("msg_id") != msg_id:
            continue
        kind = msg["header"]["msg_type"]
        if kind == "stream":
            printed.append(msg["content"]["text"])
        elif kind == "error":
            error = msg["content"]["ename"]
        elif kind == "execute_reply":
            status = msg["content"]["status"]
        elif kind == "status":
            idle = msg["content"]["execution_state"] == "idle"
    return status, "".join(printed), error


def test_a_chapter_runs_through_the_lab_kernel(lab):
    body = json.dumps({"path": CHAPTER, "type": "notebook", "name": CHAPTER,
                       "kernel": {"name": "python3"}}).encode()
    _, reply = get(f"{lab}/api/sessions", data=body, method="POST")
    session = json.loads(reply)
    kernel_id = session["kernel"]["id"]
    ws = websocket.create_connection(
        f"{lab.replace('http', 'ws')}/api/kernels/{kernel_id}/channels?token={TOKEN}",
        timeout=120)
    try:
        status, printed, _ = execute(ws, session["id"], "import sys; print(sys.prefix)")
        assert status == "ok" and Path(printed.strip()).resolve() == (ROOT / ".venv").resolve()
        nb = nbformat.read(ROOT / "chapters" / CHAPTER, as_version=4)
        for index, cell in enumerate(c for c in nb.cells if c.cell_type == "code"):
            status, _, error = execute(ws, session["id"], cell.source)
            assert status == "ok", f"{CHAPTER}, code cell {index}: {error}"
    finally:
        ws.close()
        get(f"{lab}/api/sessions/{session['id']}", method="DELETE")
