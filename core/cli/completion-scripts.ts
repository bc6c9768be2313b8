import type { CompletionNode, Completes, Shell } from "./completion-tree.js";

// The completion script for one shell, generated from the command tree. Each script walks the words before the
// cursor the way commander reads them (a command's options anywhere after it, an option's value in the next word or
// after "=", nothing of uuldana's after "--") and asks uuldana only for the values it lists.
export function completionScript(shell: Shell, nodes: readonly CompletionNode[], version: string): string {
  const header = `# uuldana ${version}: completion for ${shell}, generated from its commands; generate it again after an update\n`;
  if (shell === "bash") return header + bashScript(nodes);
  if (shell === "zsh") return `#compdef uuldana\n${header}${zshScript(nodes)}`;
  return header + fishScript(nodes);
}

// --- internal ---

// How a script names what a word completes to: "nothing", "files", "listed entries", "words a b c".
function spell(completes: Completes | undefined): string {
  if (!completes) return "";
  if (completes.kind === "words") return `words ${completes.words.join(" ")}`;
  if (completes.kind === "listed") return `listed ${completes.values}`;
  return completes.kind;
}

// A POSIX shell word holding the text as it is (bash, zsh).
function quote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

// A fish word holding the text as it is.
function fishQuote(text: string): string {
  return `'${text.replace(/[\\']/g, (char) => `\\${char}`)}'`;
}

// The text of a description on one line.
function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

function key(node: CompletionNode): string {
  return node.path.join(" ");
}

// One case per command of the tree, its value-taking options in another; both set the variables a walker reads.
function posixTables(nodes: readonly CompletionNode[], withDescriptions: boolean, pattern: (word: string) => string): string {
  const describe = (name: string, description: string): string => quote(withDescriptions ? `${name}:${oneLine(description)}` : name);
  const commands = nodes.map((node) => {
    const names = node.commands.map((command) => quote(command.name)).join(" ");
    const shown = node.commands.map((command) => describe(command.name, command.description)).join(" ");
    const options = node.options.map((option) => describe(option.name, option.description)).join(" ");
    const args = node.arguments.map((argument) => quote(spell(argument))).join(" ");
    return [
      `    ${pattern(key(node))})`,
      `      __uuldana_names=(${names})`,
      ...(withDescriptions ? [`      __uuldana_cmds=(${shown})`] : []),
      `      __uuldana_opts=(${options})`,
      `      __uuldana_args=(${args})`,
      `      __uuldana_variadic=${node.variadic ? 1 : 0} ;;`,
    ].join("\n");
  });
  const values = nodes.flatMap((node) =>
    node.options.filter((option) => option.value).map((option) => `    ${pattern(`${key(node)}|${option.name}`)}) __uuldana_v=${quote(spell(option.value))} ;;`),
  );
  return `# what each command has: its subcommands, options and arguments
__uuldana_node() {
  case $1 in
${commands.join("\n")}
  esac
}

# what the value of an option completes to; empty for an option that takes none
__uuldana_value() {
  __uuldana_v=''
  case "$1|$2" in
${values.join("\n")}
  esac
}
`;
}

function bashScript(nodes: readonly CompletionNode[]): string {
  return `${posixTables(nodes, false, quote)}
__uuldana_add() {
  local word
  for word in "$@"; do
    [[ $word == "$cur"* ]] && COMPREPLY+=("$prefix$word")
  done
}

__uuldana_put() {
  local value
  local -a words
  case $1 in
    files)
      compopt -o filenames 2>/dev/null
      while IFS= read -r value; do COMPREPLY+=("$value"); done < <(compgen -f -- "$cur") ;;
    'listed '*)
      while IFS= read -r value; do
        [[ $value == "$cur"* ]] && COMPREPLY+=("$prefix$value")
      done < <(command uuldana completion --values "\${1#listed }" 2>/dev/null) ;;
    'words '*)
      read -r -a words <<< "\${1#words }"
      __uuldana_add "\${words[@]}" ;;
  esac
}

_uuldana() {
  local cur=\${COMP_WORDS[COMP_CWORD]} node='' word expect='' prefix='' dashdash=0 argi=0 i
  local -a __uuldana_names=() __uuldana_opts=() __uuldana_args=()
  local __uuldana_variadic=0 __uuldana_v=''
  COMPREPLY=()
  __uuldana_node ''
  for (( i = 1; i < COMP_CWORD; i++ )); do
    word=\${COMP_WORDS[i]}
    if [[ -n $expect ]]; then
      # bash splits "--provider=x" into "--provider", "=" and "x"
      [[ $word == = ]] || expect=''
      continue
    fi
    (( dashdash )) && continue
    if [[ $word == -- ]]; then dashdash=1; continue; fi
    if [[ $word == -?* ]]; then
      [[ $word == *=* ]] && continue
      __uuldana_value "$node" "$word"
      [[ -n $__uuldana_v ]] && expect=$word
      continue
    fi
    if (( argi == 0 )); then
      local name found=0
      for name in "\${__uuldana_names[@]}"; do [[ $name == "$word" ]] && found=1; done
      if (( found )); then
        node=\${node:+$node }$word
        __uuldana_node "$node"
        continue
      fi
    fi
    argi=$((argi + 1))
  done
  if [[ -n $expect ]]; then
    [[ $cur == = ]] && cur=''
    __uuldana_value "$node" "$expect"
    __uuldana_put "$__uuldana_v"
    return 0
  fi
  if (( dashdash )); then __uuldana_put files; return 0; fi
  if [[ $cur == --*=* ]]; then
    __uuldana_value "$node" "\${cur%%=*}"
    [[ -n $__uuldana_v ]] || return 0
    prefix=\${cur%%=*}=
    cur=\${cur#*=}
    __uuldana_put "$__uuldana_v"
    return 0
  fi
  if [[ $cur == -* ]]; then __uuldana_add "\${__uuldana_opts[@]}"; return 0; fi
  (( argi == 0 )) && __uuldana_add "\${__uuldana_names[@]}"
  local count=\${#__uuldana_args[@]}
  if (( argi < count )); then
    __uuldana_put "\${__uuldana_args[argi]}"
  elif (( __uuldana_variadic && count > 0 )); then
    __uuldana_put "\${__uuldana_args[count - 1]}"
  fi
  return 0
}

complete -F _uuldana uuldana
`;
}

function zshScript(nodes: readonly CompletionNode[]): string {
  return `${posixTables(nodes, true, (word) => `(${quote(word)}`)}
__uuldana_put() {
  local -a values
  case $1 in
    (files) _files ;;
    (listed\\ *)
      values=(\${(f)"$(command uuldana completion --values \${1#listed } 2>/dev/null)"})
      compadd -a values ;;
    (words\\ *)
      values=(\${=\${1#words }})
      compadd -a values ;;
  esac
}

_uuldana() {
  local cur=\${words[CURRENT]} node='' word expect='' dashdash=0 argi=0 i
  local -a __uuldana_names __uuldana_cmds __uuldana_opts __uuldana_args
  local __uuldana_variadic=0 __uuldana_v=''
  __uuldana_node ''
  for (( i = 2; i < CURRENT; i++ )); do
    word=\${(Q)words[i]}
    if [[ -n $expect ]]; then expect=''; continue; fi
    (( dashdash )) && continue
    if [[ $word == -- ]]; then dashdash=1; continue; fi
    if [[ $word == -?* ]]; then
      [[ $word == *=* ]] && continue
      __uuldana_value "$node" "$word"
      [[ -n $__uuldana_v ]] && expect=$word
      continue
    fi
    if (( argi == 0 && \${__uuldana_names[(Ie)$word]} )); then
      node=\${node:+$node }$word
      __uuldana_node "$node"
      continue
    fi
    argi=$((argi + 1))
  done
  if [[ -n $expect ]]; then
    __uuldana_value "$node" "$expect"
    __uuldana_put "$__uuldana_v"
    return
  fi
  if (( dashdash )); then _files; return; fi
  if [[ $cur == --*=* ]]; then
    __uuldana_value "$node" "\${cur%%=*}"
    [[ -n $__uuldana_v ]] || return 1
    compset -P '*='
    __uuldana_put "$__uuldana_v"
    return
  fi
  if [[ $cur == -* ]]; then _describe -t options option __uuldana_opts; return; fi
  (( argi == 0 && $#__uuldana_cmds )) && _describe -t commands command __uuldana_cmds
  if (( argi < $#__uuldana_args )); then
    __uuldana_put "\${__uuldana_args[argi + 1]}"
  elif (( __uuldana_variadic && $#__uuldana_args )); then
    __uuldana_put "\${__uuldana_args[-1]}"
  fi
}

# loaded from a folder on $fpath the file is the function's body; sourced or eval'd, it registers the function
if [[ \${zsh_eval_context[-1]} == loadautofunc ]]; then
  _uuldana "$@"
elif (( $+functions[compdef] )); then
  compdef _uuldana uuldana
else
  print -u2 'uuldana: completion needs compinit first: autoload -Uz compinit && compinit'
fi
`;
}

function fishScript(nodes: readonly CompletionNode[]): string {
  const described = (name: string, description: string): string => `${fishQuote(name)}\\t${fishQuote(oneLine(description))}`;
  const set = (name: string, words: string[]): string => `            set ${name}${words.map((word) => ` ${word}`).join("")}`;
  const commands = nodes.map((node) =>
    [
      `        case ${fishQuote(key(node))}`,
      set("__uuldana_names", node.commands.map((command) => fishQuote(command.name))),
      set("__uuldana_cmds", node.commands.map((command) => described(command.name, command.description))),
      set("__uuldana_opts", node.options.map((option) => described(option.name, option.description))),
      set("__uuldana_args", node.arguments.map((argument) => fishQuote(spell(argument)))),
      `            set __uuldana_variadic ${node.variadic ? 1 : 0}`,
    ].join("\n"),
  );
  const values = nodes.flatMap((node) =>
    node.options.filter((option) => option.value).map((option) => `        case ${fishQuote(`${key(node)}|${option.name}`)}\n            set __uuldana_v ${fishQuote(spell(option.value))}`),
  );
  return `# what each command has: its subcommands, options and arguments
function __uuldana_node --no-scope-shadowing --argument-names node
    switch $node
${commands.join("\n")}
    end
end

# what the value of an option completes to; empty for an option that takes none
function __uuldana_value --no-scope-shadowing --argument-names node option
    set __uuldana_v ''
    switch "$node|$option"
${values.join("\n")}
    end
end

${FISH_COMPLETER}`;
}

// The part of the fish script that is the same for every command tree: putting candidates out and completing a line.
const FISH_COMPLETER = `function __uuldana_put --argument-names what prefix word
    switch $what
        case files
            for path in (__fish_complete_path "$word")
                printf '%s\\n' "$prefix$path"
            end
        case 'listed *'
            for value in (command uuldana completion --values (string replace 'listed ' '' -- $what) 2>/dev/null)
                printf '%s\\n' "$prefix$value"
            end
        case 'words *'
            for value in (string split ' ' -- (string replace 'words ' '' -- $what))
                printf '%s\\n' "$prefix$value"
            end
    end
end

function __uuldana_complete
    set -l words (commandline -opc)
    set -e words[1]
    set -l cur (commandline -ct)
    set -l node ''
    set -l expect ''
    set -l dashdash 0
    set -l argi 0
    set -l __uuldana_names
    set -l __uuldana_cmds
    set -l __uuldana_opts
    set -l __uuldana_args
    set -l __uuldana_variadic 0
    set -l __uuldana_v ''
    __uuldana_node ''
    for word in $words
        if test -n "$expect"
            set expect ''
            continue
        end
        test $dashdash = 1; and continue
        if test "$word" = --
            set dashdash 1
            continue
        end
        if string match -q -- '-?*' "$word"
            string match -q -- '*=*' "$word"; and continue
            __uuldana_value "$node" "$word"
            test -n "$__uuldana_v"; and set expect $word
            continue
        end
        if test $argi = 0; and contains -- $word $__uuldana_names
            if test -z "$node"
                set node $word
            else
                set node "$node $word"
            end
            __uuldana_node "$node"
            continue
        end
        set argi (math $argi + 1)
    end
    if test -n "$expect"
        __uuldana_value "$node" $expect
        __uuldana_put $__uuldana_v '' "$cur"
        return
    end
    if test $dashdash = 1
        __uuldana_put files '' "$cur"
        return
    end
    if string match -q -- '--*=*' "$cur"
        set -l option (string split -m 1 = -- "$cur")
        __uuldana_value "$node" $option[1]
        test -n "$__uuldana_v"; and __uuldana_put $__uuldana_v "$option[1]=" $option[2]
        return
    end
    if string match -q -- '-*' "$cur"
        set -q __uuldana_opts[1]; and printf '%s\\n' $__uuldana_opts
        return
    end
    test $argi = 0; and set -q __uuldana_cmds[1]; and printf '%s\\n' $__uuldana_cmds
    set -l count (count $__uuldana_args)
    if test $argi -lt $count
        __uuldana_put $__uuldana_args[(math $argi + 1)] '' "$cur"
    else if test $__uuldana_variadic = 1 -a $count -gt 0
        __uuldana_put $__uuldana_args[-1] '' "$cur"
    end
end

complete -c uuldana -e
complete -c uuldana -f -a '(__uuldana_complete)'
`;

