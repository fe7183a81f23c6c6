/** A timer named by a request: its id (canonical digit string) and the app it must belong to. */
export interface TimerRef {
  id: string;
  app: string;
}
