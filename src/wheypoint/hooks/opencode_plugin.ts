// wheypoint OpenCode plugin. Written by `wheypoint hooks install --harness opencode`, removed by `hooks uninstall`;
// an install rewrites it whole, so edit the command with `--command`, not here.
//
// OpenCode has plugins rather than command hooks, so this file is the bridge: on each hook below it runs
// wheypoint's hook command in a shell, writes the JSON payload a hook reads to its stdin, and reads back
// the one JSON line `{"context": "<text>"}` it prints.
// - experimental.chat.system.transform (called before every model request, with the session's id) -> the first
//   request of a session in this process runs `hook SessionStart` once; its answer, the resume packet, is kept
//   per session and added as one more system prompt entry to each request of that session. OpenCode rebuilds
//   the system prompt for every request and never stores it in the session's history, so this is the packet
//   once in the model's context, never a copy per turn piling up in the conversation, and never inside or in
//   place of a user's message. A session's event hook cannot add context, so no event is used for it.
// - experimental.session.compacting -> `hook PreCompact`: a rescue checkpoint of the session; the context it
//   answers (the fresh resume packet) is added to what the compaction summarises (output.context), and it
//   replaces the kept packet, so the requests after the compaction carry the fresh one, once. The compaction's
//   own request, which already holds it in its prompt, gets no second copy in its system prompt.
// - event session.created: notes which sessions began here (SessionStart's `source`) and which are subagents'
//   (a child session gets no packet: its parent has it).
// Whatever goes wrong (no runtime, a timeout, bad output) is ignored: a hook must never break a session.
// Plain JavaScript syntax on purpose (valid TypeScript too): OpenCode loads it as is, no build step.
import { spawn } from "node:child_process"

const COMMANDS = __WHEYPOINT_COMMANDS__
const TIMEOUT_MS = __WHEYPOINT_TIMEOUTS__
const MAX_SESSIONS = 256 // packets kept at once, one per session

function runHook(event, payload) {
  const command = COMMANDS[event]
  if (!command) return Promise.resolve("")
  return new Promise((resolve) => {
    let out = ""
    let done = false
    let timer = null
    const finish = () => {
      if (done) return
      done = true
      if (timer) clearTimeout(timer)
      resolve(out)
    }
    let child
    try {
      child = spawn(command, { shell: true, cwd: payload.cwd, stdio: ["pipe", "pipe", "ignore"], windowsHide: true })
    } catch {
      finish()
      return
    }
    timer = setTimeout(() => {
      out = ""
      child.kill()
      finish()
    }, TIMEOUT_MS[event] || 10000)
    child.on("error", () => {
      out = ""
      finish()
    })
    child.on("close", finish)
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (chunk) => {
      out += chunk
    })
    child.stdin.on("error", () => {})
    child.stdin.end(JSON.stringify(payload))
  })
}

function contextOf(out) {
  const lines = String(out || "").trim().split("\n")
  try {
    const answer = JSON.parse(lines[lines.length - 1])
    return answer && typeof answer.context === "string" ? answer.context : ""
  } catch {
    return ""
  }
}

export const WheypointPlugin = async ({ directory, worktree }) => {
  const cwd = directory || worktree || process.cwd()
  const packets = new Map() // session id -> Promise of the packet its requests carry ("" when there is none)
  const started = new Set() // sessions created in this process: SessionStart's source is "startup", else "resume"
  const children = new Set() // subagents' sessions
  const compacting = new Set() // sessions whose next request is the compaction's own
  const packetOf = (id) => {
    if (!packets.has(id)) {
      const source = started.has(id) ? "startup" : "resume"
      const payload = { session_id: id, cwd, hook_event_name: "SessionStart", source, transcript_path: null }
      remember(id, runHook("SessionStart", payload).then(contextOf))
    }
    return packets.get(id)
  }
  const remember = (id, packet) => {
    packets.delete(id)
    packets.set(id, packet)
    // A server runs for days: the oldest sessions' packets go (one that comes back asks the hook again).
    while (packets.size > MAX_SESSIONS) packets.delete(packets.keys().next().value)
  }
  return {
    "experimental.chat.system.transform": async (input, output) => {
      const id = input && input.sessionID
      if (typeof id !== "string" || !id || children.has(id) || !output || !Array.isArray(output.system)) return
      if (compacting.delete(id)) return
      const text = await packetOf(id)
      if (!text || output.system.some((entry) => typeof entry === "string" && entry.includes(text))) return
      output.system.push(text)
    },
    "experimental.session.compacting": async (input, output) => {
      const id = input && input.sessionID
      const payload = { session_id: id, cwd, hook_event_name: "PreCompact", trigger: "auto", transcript_path: null }
      const text = contextOf(await runHook("PreCompact", payload))
      if (typeof id === "string" && id) {
        compacting.add(id)
        if (text) remember(id, Promise.resolve(text))
      }
      if (text && output && Array.isArray(output.context)) output.context.push(text)
    },
    event: async ({ event }) => {
      if (!event || event.type !== "session.created") return
      const info = event.properties && event.properties.info
      if (!info || typeof info.id !== "string") return
      started.add(info.id)
      if (info.parentID) children.add(info.id)
    },
  }
}
