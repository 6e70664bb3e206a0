import "server-only";
import { accountKind } from "./account";
import type { EffectKind } from "./connector";
import { emailKind } from "./email";
import { paymentKind } from "./payment";

/*
 * The kinds of side effect, each declared by the module that delivers it: the one list. The dispatcher's connectors
 * deliver these kinds (a test checks the two agree), and the thread page's words and an effect task's actions come
 * from here.
 */
export const EFFECT_KINDS: readonly EffectKind[] = [paymentKind, emailKind, accountKind];

/** The declared kind, or undefined for a kind nobody delivers (an effect row of an older version, say). */
export function effectKind(kind: string): EffectKind | undefined {
  return EFFECT_KINDS.find((k) => k.kind === kind);
}
