// What uuldana uses for a setting config.json does not give, by the setting's key. A key not here has no default:
// the setting is off (rotate_at_percent_left, notify_command) or means nothing to a run ($schema). The schema's
// description of each setting says the same "(default …)", and a test holds the two together.
export const CONFIG_DEFAULTS: Readonly<Record<string, unknown>> = {
  // the installed agents, in id order, while auto_detect is on
  providers: [],
  failover: true,
  auto_detect: true,
  cooldown_minutes: 300,
  ceiling: "ask",
  quiet_seconds: 1.5,
  dismiss_seconds: 20,
  command_key: "ctrl-]",
  scrollback: 5000,
  handoff_workspace: false,
  receiver_seconds: 60,
  wait: false,
  wait_max_hours: 24,
  return_home: false,
  notify: true,
  paid_usage: "never",
  packs: [],
  replaces: {},
  redact: [],
};
