/** What authentication needs from the app store (AppRepository implements it). */
export interface AppTokenLookup {
  /** The app a live (not revoked) token belongs to, or null. */
  appForToken(token: string): Promise<string | null>;
}

export const APP_TOKENS = Symbol('APP_TOKENS');
