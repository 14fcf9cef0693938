/**
 * The page's side of the channel's flow control: how many of the device's
 * bytes may still go to the server before it acknowledges some. Reading the
 * device waits here, so a kernel that does not read slows the device down
 * instead of filling the page's memory.
 */
export class Credit {
  constructor(public window = 16384) {}

  /** Bytes sent and not yet acknowledged. */
  get unacked(): number {
    return this._unacked;
  }

  /** Whether `spent()` may be called now. */
  get available(): boolean {
    return this._unacked < this.window;
  }

  spent(count: number): void {
    this._unacked += count;
  }

  /** The server acknowledged `count` bytes. */
  acknowledged(count: number): void {
    this._unacked = Math.max(0, this._unacked - count);
    this.wake();
  }

  /** A new channel (a re-attach): what the old one had in flight is gone. */
  reset(window: number): void {
    this.window = window;
    this._unacked = 0;
    this.wake();
  }

  /** Resolves at the next acknowledgement, reset or `wake()`. */
  changed(): Promise<void> {
    return new Promise<void>(resolve => this._waiting.push(resolve));
  }

  /** Let every waiter look again (the channel closed, reading stops). */
  wake(): void {
    const waiting = this._waiting;
    this._waiting = [];
    waiting.forEach(resolve => resolve());
  }

  private _unacked = 0;
  private _waiting: Array<() => void> = [];
}
