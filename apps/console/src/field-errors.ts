/**
 * The API's validation answer is one message per failed rule joined with "; ", each starting with the
 * property path it is about ("notifyHTTPParam.url must be ...", "every must be at least 1s; got \"0s\"",
 * "notifyHTTPParam.header: name ... is not a valid header name").
 * Splits it into the message of each field, so a form shows it next to that field; a message about no
 * field ("property x should not exist") is kept under "".
 */
export function fieldErrors(msg: string): Record<string, string> {
  const out: Record<string, string> = {};
  let key: string | undefined;
  for (const part of msg.split('; ')) {
    const text = part.trim();
    if (!text) continue;
    // A part that does not start "<path> must|should|is|..." continues the message before it
    // ('every must be at least 1s; got "0s"').
    const m = /^([A-Za-z]\w*(?:\.\w+)*)(?:: | (?:(?:must|should|is|has|can|does)\b|"[^"]*" is ))/.exec(text);
    if (m || key === undefined) {
      key = m && m[1] !== 'property' ? m[1] : '';
      out[key] = out[key] ? `${out[key]}; ${text}` : text;
    } else {
      out[key] = `${out[key]}; ${text}`;
    }
  }
  return out;
}
