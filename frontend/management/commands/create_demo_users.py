from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

DEMO_USERS = (
    # username, password, is_staff
    ("learner", "learner-demo-pass", False),
    ("admin", "admin-demo-pass", True),
)


class Command(BaseCommand):
    help = "Create the demo accounts that `make run` prints (development only)."

    def handle(self, *args: Any, **options: Any) -> None:
        User = get_user_model()
        for username, password, staff in DEMO_USERS:
            user, created = User.objects.get_or_create(username=username, defaults={"is_staff": staff, "is_superuser": staff})
            if created:
                user.set_password(password)
                user.save()
            self.stdout.write(f"{username} / {password}{' (admin)' if staff else ''}{'' if created else ' (existing)'}")
