"""Secret shapes the gate must refuse, and ordinary facts it must let through (shared by the gate's suites).

Every value is made up for the tests (random characters in each service's format); none is a real key.
`SECRETS` holds (name, text, value): `value` is the part that must never be stored, searched for on disk.
"""

from __future__ import annotations

ZWSP = "\u200b"

_AWS_SECRET = "2uvEgoqiXnLAC1lIAYJRfza0hW/rdE2oapzzQbkr"
_AZURE = "bOfltQumZYXrTTIzPXxwvbNcJ92lIKs59DwQsSgJSdxm6rRAr2Bz2bgT/VhVZ73ymvkTHF8xbQCwdhzRKqQMYe=="
_PROJ = "sk-proj-jZF67fOwszWtWeYrK19xm-HGVSbzh7NnAbz7pGNLCbw1IVSP"
_PEM_BODY = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"
_PEM = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{_PEM_BODY}\n-----END OPENSSH PRIVATE KEY-----"
_GHP = "ghp_I6bGfKFI6mAezmOWfSLjl8MU9cdrJRM2jVrV"
_ANT = "sk-ant-api03-udrAlgAcH4TTjm02whFt1UyS0euOJ6LK32nhTC0H"
_LEGACY = "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"
_QUERY = "wAEQR97m95x5ypK1x45h8seBLttDK8my"
_JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"

SECRETS: list[tuple[str, str, str]] = [
    ("aws access key id", "My AWS key id is AKIA3XRILAV63FV9CYK2.", "AKIA3XRILAV63FV9CYK2"),
    ("aws secret as config", f"aws_secret_access_key = {_AWS_SECRET}", _AWS_SECRET),
    ("aws secret in prose", f"The user's AWS secret access key is {_AWS_SECRET}.", _AWS_SECRET),
    ("aws secret bare", f"Keep this for the deploy: {_AWS_SECRET}", _AWS_SECRET),
    ("github classic", f"token {_GHP} for CI", _GHP),
    (
        "github fine-grained",
        "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 is the PAT",
        "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",
    ),
    ("gitlab", "The GitLab token is glpat-VVrLvHdgwHvpsbgh5AXL.", "glpat-VVrLvHdgwHvpsbgh5AXL"),
    ("hugging face", "HF: hf_Na9ZwsjEJri9fVJsSheACjTJWYyL4ZkQTr", "hf_Na9ZwsjEJri9fVJsSheACjTJWYyL4ZkQTr"),
    ("npm", "publish with npm_XM4MFwg7drHilZO0fkXYo2amlEDLJIyflJEL", "npm_XM4MFwg7drHilZO0fkXYo2amlEDLJIyflJEL"),
    (
        "sendgrid",
        "SendGrid: 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",
        "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",
    ),
    ("stripe test", "The Stripe test key is sk_test_8PfxgVbDOHmx3OfpaqWHRmaC", "sk_test_8PfxgVbDOHmx3OfpaqWHRmaC"),
    ("stripe live", "stripe sk_live_q8Nb9gHZAd5qE2uM3oOdRrit", "sk_live_q8Nb9gHZAd5qE2uM3oOdRrit"),
    ("stripe restricted", "rk_live_cZlwY5z7a46t92gbuCpAMuFK is the restricted key", "rk_live_cZlwY5z7a46t92gbuCpAMuFK"),
    ("basic auth header", "Authorization: Basic ZGVwbG95Onc0MTV6Qm5mcnRERE43", "ZGVwbG95Onc0MTV6Qm5mcnRERE43"),
    (
        "bearer header",
        "Authorization: Bearer 64XxQZhPlvOdyBUrkR5XBQjc18DP-m7aKAjC",
        "64XxQZhPlvOdyBUrkR5XBQjc18DP-m7aKAjC",
    ),
    (
        "azure connection string",
        f"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={_AZURE};EndpointSuffix=core.windows.net",
        _AZURE,
    ),
    ("azure short key", "SharedAccessKey=Q2hhbmdlTWVQbGVhc2UxMjM0NTY3OA==", "Q2hhbmdlTWVQbGVhc2UxMjM0NTY3OA=="),
    ("bank password prose", "The password for my bank account is Tr0ub4dor&3.", "Tr0ub4dor&3"),
    ("pw colon", "pw: hunter2!", "hunter2!"),
    ("pw colon plain word", "email pw: sunshine", "sunshine"),
    ("log in as admin", "To deploy, log in as admin with s3cr3tPass", "s3cr3tPass"),
    ("password plain word", "My password is sunshine", "password is sunshine"),
    ("wifi password", "The wifi password: blue-Falcon-42", "blue-Falcon-42"),
    ("pin", "My PIN is 4821.", "PIN is 4821"),
    ("passphrase quoted", 'The disk passphrase is "correct horse battery staple"', "correct horse battery staple"),
    ("sk-proj with zero-width space", f"My OpenAI key is {_PROJ[:20]}{ZWSP}{_PROJ[20:]}", _PROJ[20:]),
    ("sk-proj plain", f"OPENAI_API_KEY={_PROJ}", _PROJ),
    ("anthropic", f"ANTHROPIC_API_KEY={_ANT}", _ANT),
    ("openai legacy", f"the old key {_LEGACY}", _LEGACY),
    (
        "slack bot",
        "slack xoxb-990379168421-8842623474785-RGX3DdLIOTE0ffAWX1UveYEk",
        "xoxb-990379168421-8842623474785-RGX3DdLIOTE0ffAWX1UveYEk",
    ),
    (
        "slack webhook",
        "Post to https://hooks.slack.com/services/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",
        "a23vGVC4H8XxuXlkSuSTuvEf",
    ),
    ("json web token", f"session {_JWT}", _JWT),
    ("private key", _PEM, _PEM_BODY),
    ("password in url", "db is postgres://app:Wq9xLm2z@db.internal:5432/prod", "Wq9xLm2z"),
    ("google api key", "Maps key AIzaPKmGMhY8iN0D5LW5fAvpiklKb9Lg5vulImp", "AIzaPKmGMhY8iN0D5LW5fAvpiklKb9Lg5vulImp"),
    (
        "pypi",
        "pypi-AgEIcHlwaS5vcmcuGVHCzz-y0I7FZlGItxcWr6-pnXYQrCRETknkaU7VC5a5GRuViLAIuZpdEtc",
        "pypi-AgEIcHlwaS5vcmcuGVHCzz-y0I7FZlGItxcWr6-pnXYQrCRETknkaU7VC5a5GRuViLAIuZpdEtc",
    ),
    (
        "discord",
        "bot MRSlNeO6ziATTSrLPEeAjrgP.GjjEHq.aVmKpaD9vTJzvRcEkybZa9cgyMM",
        "MRSlNeO6ziATTSrLPEeAjrgP.GjjEHq.aVmKpaD9vTJzvRcEkybZa9cgyMM",
    ),
    ("telegram", "bot 816838311:AAkBOe6xJTmIGshfUksQcHEwdg2aSjqys67", "816838311:AAkBOe6xJTmIGshfUksQcHEwdg2aSjqys67"),
    ("twilio", "Twilio key SKaef76f8e1f64e5f3db5ae3142b28838e", "SKaef76f8e1f64e5f3db5ae3142b28838e"),
    ("mailchimp", "mailchimp d6c69cab46211a2edb0a5e8118e708c1-us12", "d6c69cab46211a2edb0a5e8118e708c1-us12"),
    ("square", "square sq0atp-A2nPhZo1kLSFc8u0xgU2YT", "sq0atp-A2nPhZo1kLSFc8u0xgU2YT"),
    ("card number", "Card 4111 1111 1111 1111 expires 09/29", "4111 1111 1111 1111"),
    ("random key in prose", "The vault unlock code is sJJUbOT88TAvP9Ebumph9ywTyMOe", "sJJUbOT88TAvP9Ebumph9ywTyMOe"),
    ("token in a url", f"https://api.example.com/v1?access_token={_QUERY}", _QUERY),
    ("api key assignment", "api_key=wAEQR97m95x5ypK1x45h8seB", "wAEQR97m95x5ypK1x45h8seB"),
    ("client secret", "client_secret: Zx81kQmw02Lp", "Zx81kQmw02Lp"),
    ("x-api-key header", "x-api-key: 7fQ2mZx9Lr4Kp1", "7fQ2mZx9Lr4Kp1"),
    ("json password", '{"user": "ops", "password": "Hunter2Hunter2"}', "Hunter2Hunter2"),
    ("chinese password", "我的密码是 Abc12345!", "Abc12345!"),
    ("german password", "Mein Passwort ist Sonne2024!", "Sonne2024!"),
    ("zero-width inside the word password", f"pass{ZWSP}word: Qw3rty99", "Qw3rty99"),
    ("fullwidth key", "ｇｈｐ＿I6bGfKFI6mAezmOWfSLjl8MU9cdrJRM2jVrV", "I6bGfKFI6mAezmOWfSLjl8MU9cdrJRM2jVrV"),
]

ORDINARY: list[str] = [
    "My flight is UA 857 on Friday.",
    "The bug was fixed in commit 3f9a2c1d4e5b6a7980c1d2e3f4a5b6c7d8e9f0a1.",
    "The password policy requires 12 characters.",
    "I changed my password yesterday.",
    "My password manager is 1Password.",
    "The password is at least 16 characters long.",
    "My order number is 112-4589632-7745120.",
    "Call the office on +44 20 7946 0958.",
    "The meeting ID is 845 2231 9087.",
    "The secret ingredient is cumin.",
    "The token ring network came from IBM.",
    "The API rate limit is 100 requests per minute.",
    "The docs are at https://example.com/docs/getting-started?lang=en.",
    "The user's favourite function is computeSha256Digest.",
    "The user's laptop is a ThinkPadX1Carbon2024Edition.",
    "The build finished at 2024-03-01T12:00:00Z.",
    "The tracking id is 123e4567-e89b-12d3-a456-426614174000.",
    "我住在柏林。",
    "The user's sister is called Ines.",
    "The user keeps their passwords in a password manager.",
]
