// What Linux's /proc says: a process's resident memory and CPU time, and how busy the machine as a whole has been.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";

export function rssMB(pid) {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
  return kb / 1024;
}

// the kernel's clock tick, in which /proc counts CPU time; nearly always 100
let ticksPerSecond;
const ticks = () => (ticksPerSecond ??= Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout) || 100);

// user + system time in seconds; the fields after the command name, which may itself hold spaces
export function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(") ") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / ticks();
}

// CPU seconds the whole machine has been busy (steal included: a neighbour on the host takes it just the same)
export function machineBusySeconds() {
  const [user, nice, system, , , irq, softirq, steal] = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
  return (user + nice + system + irq + softirq + (steal ?? 0)) / ticks();
}

// CPU seconds of this process and of every child it has waited for, and their children in turn
export function ownTreeSeconds() {
  const stat = readFileSync("/proc/self/stat", "utf8");
  const fields = stat.slice(stat.lastIndexOf(") ") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / ticks();
}
