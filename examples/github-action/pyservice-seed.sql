-- The Python example service's schema (examples/pyservice: the schema
-- pyservice.Seed creates) and twenty users, each with a random bearer
-- token, for the example workflow. Run it on the service's database; read
-- the tokens back with SELECT token FROM api_tokens ORDER BY user_id.
-- Re-running it keeps what is there and adds no second token.
CREATE TABLE IF NOT EXISTS users (
	id         bigserial PRIMARY KEY,
	email      text NOT NULL UNIQUE,
	created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS api_tokens (
	token      text PRIMARY KEY,
	user_id    bigint NOT NULL REFERENCES users (id),
	active     boolean NOT NULL DEFAULT true,
	created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS api_tokens_user_id ON api_tokens (user_id);
CREATE TABLE IF NOT EXISTS runs (
	id         bigserial PRIMARY KEY,
	user_id    bigint NOT NULL REFERENCES users (id),
	name       text NOT NULL DEFAULT 'run',
	created_at timestamptz NOT NULL DEFAULT now(),
	done_at    timestamptz NOT NULL
);
CREATE TABLE IF NOT EXISTS upstream_calls (
	id          bigserial PRIMARY KEY,
	user_id     bigint NOT NULL REFERENCES users (id),
	url         text NOT NULL,
	started_at  timestamptz NOT NULL,
	finished_at timestamptz,
	status      integer
);
CREATE INDEX IF NOT EXISTS upstream_calls_user_started ON upstream_calls (user_id, started_at);

INSERT INTO users (email)
SELECT format('user%s@pyservice.test', lpad(i::text, 3, '0')) FROM generate_series(0, 19) AS i
ON CONFLICT (email) DO NOTHING;
-- gen_random_uuid is built in from PostgreSQL 13 on: no extension needed.
INSERT INTO api_tokens (token, user_id)
SELECT 'pys_' || replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), u.id
FROM users u
WHERE NOT EXISTS (SELECT 1 FROM api_tokens t WHERE t.user_id = u.id);
