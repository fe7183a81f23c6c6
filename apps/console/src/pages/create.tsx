import { useState } from 'react';
import { Api } from '../api';
import { Link } from '../components';
import { hrefOf, navigate } from '../router';
import { createInput, emptyValues, TimerForm } from '../timer-form';

/**
 * A new timer. The API creates timers disabled; "enable now" enables it right after. The schedule's
 * preview is the timer page's (GET's nextFireTimes, computed by the service itself, in the timer's zone),
 * shown as soon as the timer exists: create it disabled to look before it fires.
 */
export function CreateTimer({ api }: { api: Api }) {
  const [enable, setEnable] = useState(false);
  return (
    <main>
      <p>
        <Link href={hrefOf({ page: 'timers' })}>← Timers</Link>
      </p>
      <h1>New timer in {api.app}</h1>
      <TimerForm
        initial={emptyValues()}
        submitLabel="Create timer"
        submit={async (v) => {
          const { id } = await api.createTimer(createInput(v));
          if (enable) await api.enable(id);
          navigate(hrefOf({ page: 'timer', id: String(id) }));
        }}
        onCancel={() => navigate(hrefOf({ page: 'timers' }))}
        extra={
          <label className="inline">
            <input type="checkbox" name="enable" checked={enable} onChange={(e) => setEnable(e.target.checked)} /> Enable now (otherwise it is created disabled: look at its
            preview first)
          </label>
        }
      />
    </main>
  );
}
