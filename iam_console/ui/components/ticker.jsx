// A timer for pages that poll: calls onTick when it mounts and then every `interval`
// milliseconds, and stops when the page that holds it goes away (a navigation, a closed
// tab), so no poll outlives its viewer. It renders nothing.
import { useEffect, useRef } from "react";

export function Ticker({ interval, onTick }) {
  const tick = useRef(onTick);
  tick.current = onTick;
  useEffect(() => {
    tick.current && tick.current();
    const id = setInterval(() => tick.current && tick.current(), Math.max(250, interval || 0));
    return () => clearInterval(id);
  }, [interval]);
  return null;
}
