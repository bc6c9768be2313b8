// Limit wording in the languages agents ship besides English: Chinese (simplified and traditional), Japanese,
// Korean, Spanish, Portuguese, French, German, Russian and Polish. As in English, no sentences: a word that says an
// allowance is gone next to a word that names one, and the words that make such a pair something else (a
// condition, a question, a warning, a report of what was shown, a context window, a negation).

// Words without which a text holds no limit wording in these languages: added to the English test of every text,
// so they stay few and literal.
// (the words in Latin letters are in the English test's list; these are the others, asked only of a text with a
// letter of these scripts in it)
// (Cyrillic; then kana, CJK ideographs and Hangul with what lies between them, one range being cheaper to look for)
export const FOREIGN_SCRIPT = /[\u0400-\u04ff\u3040-\ud7af]/;
export const FOREIGN_MAYBE = /免费方案|免費方案|额度|額度|配额|配額|限额|限額|上限|余额|餘額|用量|限制|制限|無料枠|残高|クレジット|한도|사용량|할당량|크레딧|잔액|лимит|квот|кредит|баланс/i;

// Chinese, Japanese and Korean write no spaces: a pair is a gone-word and an allowance-word at most this many
// characters apart.
const CJK_REACH = 8;
const CJK_GONE = /已?(?:达到|達到|用完|用尽|用盡|耗尽|耗盡|消耗完|用光|不足|超出|超过|超過|超限)|(?:上限|制限)?に達しました|を使い切りました|도달했습니다|도달|초과했습니다|초과|소진|부족합니다|부족/g;
const CJK_ALLOWANCE = /额度|額度|配额|配額|限额|限額|使用上限|使用限制|余额|餘額|用量|利用上限|使用制限|利用制限|無料枠|クレジット|残高|한도|사용량|할당량|크레딧|잔액/g;
// the allowance held back until a time, in one phrase ("使用限制到 15:00", "15:00まで使用制限中")
const CJK_UNTIL = /(?:使用|利用)(?:限制|制限)(?:到|至)\s*\d|\d\s*まで(?:使用|利用)制限中|(?:使用|利用)制限中/;

// Languages written with spaces: at most four words apart. Letters outside ASCII make \b useless here: a word's
// edges are told by letters on either side.
const WORD_GONE = /(?<!\p{L})(?:alcanzad[oa]s?|agotad[oa]s?|excedid[oa]s?|superad[oa]s?|insuficientes?|atingid[oa]s?|esgotad[oa]s?|atteinte?s?|épuisée?s?|insuffisante?s?|erreicht|aufgebraucht|überschritten|erschöpft|verbraucht|unzureichend|достигнут[аоы]?|исчерпан[аоы]?|превышен[аоы]?|недостаточно|закончил(?:ся|ась|ось|ись)|osiągnięto|wyczerpan[oay]?)(?!\p{L})/giu;
const WORD_ALLOWANCE = /(?<!\p{L})(?:límites?|limites?|limit|cuotas?|cotas?|créditos?|crédits?|saldo|solde|quotas?|kontingent|nutzungslimit|guthaben|лимит\p{L}*|квот\p{L}*|кредит\p{L}*|баланс\p{L}*)(?!\p{L})/giu;
const WORD_REACH = 4;
const LATIN_GONE_STEM = /alcanzad|agotad|excedid|superad|insuficient|atingid|esgotad|atteint|épuis|insuffisant|erreicht|aufgebraucht|überschritten|erschöpft|verbraucht|unzureichend|osiągnięto|wyczerpan/i;

export interface ForeignPair {
  start: number;
  end: number;
  gone: string;
  allowance: string;
}

// The nearest gone-word and allowance-word of a sentence in one of these languages, if it has a pair.
export function foreignPair(sentence: string): ForeignPair | undefined {
  // most sentences are English: a letter of another script, or a Latin gone-word's stem, or none of this is read
  if (!FOREIGN_SCRIPT.test(sentence) && !LATIN_GONE_STEM.test(sentence)) return undefined;
  const until = CJK_UNTIL.exec(sentence);
  if (until) return { start: until.index, end: until.index + until[0].length, gone: until[0], allowance: until[0] };
  return nearest(sentence, CJK_GONE, CJK_ALLOWANCE, (between) => between.replace(/\s+/g, "").length <= CJK_REACH && !/[。！？；]/.test(between)) ??
    nearest(sentence, WORD_GONE, WORD_ALLOWANCE, (between) => between.trim().split(/\s+/).length <= WORD_REACH + 1 && !/[.!?;:]\s/.test(between));
}

// Why a pair in these languages is no notice, if it is not: the same rules as in English, in their words.
export function foreignVeto(sentence: string, pair: ForeignPair): string | undefined {
  const head = sentence.slice(0, pair.start);
  const tail = sentence.slice(pair.end);
  if (/[?？]\s*$/.test(sentence.trim()) || /(?:吗|嗎|呢|か|까|니까)[。\s]*$/.test(sentence.trim()) || /(?<!\p{L})(?:por qué|porque\?|pourquoi|warum|почему|como|comment|wie)(?!\p{L})/iu.test(head)) return "a question";
  if (/上下文|コンテキスト|컨텍스트|(?<!\p{L})(?:contexto|contexte|kontext|контекст)/iu.test(sentence)) return "a context window that is full, not an allowance";
  if (/即将|即將|快要|将要|將要|接近|まもなく|間もなく|近づ|곧|거의|(?<!\p{L})(?:casi|quase|presque|fast|почти|prawie|bientôt|pronto)(?!\p{L})/iu.test(sentence)) return "it is only close to the limit";
  if (/^\s*[后後]|^\s*(?:时|時|的话|的話|と|ると|ば|면|경우)/.test(tail) || /如果|若是|假如|一旦|(?:した|する)場合|場合は|(?<!\p{L})(?:si|cuando|quando|quand|lorsque|wenn|falls|sobald|если|когда|jeśli|gdy)(?!\p{L})/iu.test(head) || /경우/.test(sentence)) return "a condition or a possibility, not a notice";
  if (/(?:不再|不会|不會|没有|沒有|并非|並非|ではない|않)\S{0,4}\s*$/.test(head) || /(?<!\p{L})(?:no|não|pas|nicht|kein\p{L}*|не|nie)\s+(?:\p{L}+\s+)?$/iu.test(head)) return "it says the opposite";
  if (/显示|顯示|表示され|但是|可是|却|卻|(?<!\p{L})(?:aunque|embora|bien que|obwohl|хотя|mimo)(?!\p{L})/iu.test(head)) return "a remark about the limit, not the notice";
  if (/[「『“"«„]/.test(head) && /[」』”"»“]/.test(tail)) return "a quotation, not a notice";
  if (/意味着|意味著|表示|说明|說明|是指|とは|という意味|의미|(?<!\p{L})(?:significa|signifie|bedeutet|означает)(?!\p{L})/iu.test(sentence)) return "an explanation of the message, not the message";
  return undefined;
}

// A free tier that has ended, with a command to run to go on ("… free tier was discontinued. Run /auth to switch
// provider."), in English or another language: the account has no allowance left. Without a command to run it is
// news or a choice offered in a dialog, not the agent refusing work.
const FREE_TIER_ENDED = /(?:(?<!\p{L})free (?:tier|plan|quota)|免费方案|免費方案|免费额度|免費額度|無料枠|(?<!\p{L})kostenlose\s+(?:[\p{L}-]+\s+){0,2}?[\p{L}-]*kontingent|nivel gratuito|nível gratuito|niveau gratuit|бесплатн\p{L}*\s+\p{L}+)(?:(?![。.!?]\s).){0,40}?(?:(?:was|has been|is) (?:discontinued|shut down|ended)|停用|已停止|終了しました|eingestellt|descontinuad[oa]|interrompu|прекращ\p{L}*)/iu;
const RUN_COMMAND = /(?:(?<!\p{L})(?:run|ejecute|execute|exécutez|выполните)|执行|執行)\s*[`'"]?\/[\w-]+|\/[\w-]+\s*(?:を実行|aus(?!\p{L}))/iu;

export function freeTierEnded(text: string): { start: number; phrase: string } | undefined {
  const ended = /\/[\w-]/.test(text) && RUN_COMMAND.test(text) ? FREE_TIER_ENDED.exec(text) : null;
  return ended ? { start: ended.index, phrase: ended[0] } : undefined;
}

// --- internal ---

function nearest(sentence: string, goneWords: RegExp, allowanceWords: RegExp, near: (between: string) => boolean): ForeignPair | undefined {
  const gones = [...sentence.matchAll(goneWords)];
  if (!gones.length) return undefined;
  const allowances = [...sentence.matchAll(allowanceWords)];
  let best: (ForeignPair & { distance: number }) | undefined;
  for (const gone of gones) {
    for (const allowance of allowances) {
      const start = Math.min(gone.index!, allowance.index!);
      const end = Math.max(gone.index! + gone[0].length, allowance.index! + allowance[0].length);
      const first = gone.index! < allowance.index! ? gone : allowance;
      const between = sentence.slice(first.index! + first[0].length, first === gone ? allowance.index! : gone.index!);
      if (!near(between)) continue;
      if (!best || between.length < best.distance) best = { start, end, gone: gone[0], allowance: allowance[0], distance: between.length };
    }
  }
  return best && { start: best.start, end: best.end, gone: best.gone, allowance: best.allowance };
}
