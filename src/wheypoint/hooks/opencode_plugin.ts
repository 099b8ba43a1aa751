// wheypoint OpenCode plugin. Written by `wheypoint hooks install --harness opencode`, removed by `hooks uninstall`;
// an install rewrites it whole, so edit the command with `--command`, not here.
//
// OpenCode has plugins rather than command hooks, so this file is the bridge: on each event below it runs
// wheypoint's hook command in a shell, writes the JSON payload a hook reads to its stdin, and reads back
// the one JSON line `{"context": "<text>"}` it prints.
// - experimental.session.compacting -> `hook PreCompact`: a rescue checkpoint of the session; the context it
//   answers (the resume packet) is added to what the compaction keeps (output.context).
// - event session.created -> `hook SessionStart`, so wheypoint knows the session began; an event has no way
//   to add context in OpenCode, so its answer is not used.
// Whatever goes wrong (no runtime, a timeout, bad output) is ignored: a hook must never break a session.
// Plain JavaScript syntax on purpose (valid TypeScript too): OpenCode loads it as is, no build step.
import { spawn } from "node:child_process"

const COMMANDS = __WHEYPOINT_COMMANDS__
const TIMEOUT_MS = __WHEYPOINT_TIMEOUTS__

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
  return {
    "experimental.session.compacting": async (input, output) => {
      const payload = {
        session_id: input && input.sessionID,
        cwd,
        hook_event_name: "PreCompact",
        trigger: "auto",
        transcript_path: null,
      }
      const text = contextOf(await runHook("PreCompact", payload))
      if (text && output && Array.isArray(output.context)) output.context.push(text)
    },
    event: async ({ event }) => {
      if (!event || event.type !== "session.created") return
      const info = event.properties && event.properties.info
      if (!info || !info.id) return
      const payload = { session_id: info.id, cwd, hook_event_name: "SessionStart", source: "startup", transcript_path: null }
      void runHook("SessionStart", payload)
    },
  }
}
