from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from core.roles import make_instructor
from courses.demo import DEMO_COURSE_TITLE, create_demo_course

DEMO_USERS = (
    # username, password, what they are: an admin (staff), an instructor, or a learner
    ("learner", "learner-demo-pass", "learner"),
    ("teacher", "teacher-demo-pass", "instructor"),
    ("admin", "admin-demo-pass", "admin"),
)


class Command(BaseCommand):
    help = "Create the demo accounts that `make run` prints, and the teacher's demo course (development only)."

    def handle(self, *args: Any, **options: Any) -> None:
        # Production (docker-compose.yml) serves HTTPS only: known passwords there would be anyone's way in.
        if settings.HTTPS_ONLY:
            raise CommandError("Demo accounts are for `make run` only, never with HTTPS_ONLY (production).")
        User = get_user_model()
        users = {}
        for username, password, kind in DEMO_USERS:
            staff = kind == "admin"
            user, created = User.objects.get_or_create(username=username, defaults={"is_staff": staff, "is_superuser": staff})
            if created:
                user.set_password(password)
                user.save()
            if kind == "instructor":
                make_instructor(user)
            users[username] = user
            note = {"admin": " (admin)", "instructor": f" (teacher, owns the {DEMO_COURSE_TITLE})", "learner": ""}[kind]
            self.stdout.write(f"{username} / {password}{note}{'' if created else ' (existing)'}")
        create_demo_course(users["teacher"], users["learner"])
