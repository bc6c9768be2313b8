// What a command hands back to the CLI, which alone writes it out and sets the exit code.
export interface CommandResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

export function result(stdout: string, stderr = "", exitCode = 0): CommandResult {
  return { stdout, stderr, exitCode };
}
