"""Each LMS course that already links here becomes a course, its members enrolled as their last launch or roster fetch said.

What a launch would have done (lti/course_links.py), for the contexts
launched before courses existed, so grade passback (which sends the
course's counted score) keeps working for them without a new launch.
The earliest instructor becomes the owner; the stored flags do not tell
a TA apart, so a TA comes in as a teacher until their next launch.
Launches without a context (the empty context id) make no course.
"""

import secrets

from django.db import migrations
from django.utils.text import slugify


def _free_slug(Course, title):
    base = slugify(title)[:40].strip("-") or "lms-course"
    slug = base
    while Course.objects.filter(slug=slug).exists():
        slug = f"{base}-{secrets.token_hex(3)}"
    return slug


def courses_for_linked_contexts(apps, schema_editor):
    LtiContext = apps.get_model("lti_tool", "LtiContext")
    Placement = apps.get_model("lti", "Placement")
    CourseContext = apps.get_model("lti", "CourseContext")
    Course = apps.get_model("courses", "Course")
    Membership = apps.get_model("courses", "Membership")
    linked = LtiContext.objects.filter(resource_links__placement__isnull=False).exclude(id_on_platform="").exclude(course_link__isnull=False).distinct()
    for context in linked:
        title = (context.title or context.label or "LMS course")[:200]
        course = Course.objects.create(slug=_free_slug(Course, title), title=title, time_zone="UTC")
        CourseContext.objects.create(context=context, course=course)
        for placement in Placement.objects.filter(resource_link__context=context):
            if placement.rung_id is not None:
                course.rungs.add(placement.rung_id)
            else:
                course.modules.add(placement.module_id)
        owner_given = False
        members = context.memberships.filter(is_active=True, user__auth_user__isnull=False).select_related("user").order_by("datetime_created", "pk")
        for membership in members:
            if membership.is_instructor or membership.is_administrator:
                role = "teacher" if owner_given else "owner"
                owner_given = True
            elif membership.is_learner:
                role = "learner"
            else:
                continue
            Membership.objects.get_or_create(course=course, user_id=membership.user.auth_user_id, defaults={"role": role, "source": "lti"})


class Migration(migrations.Migration):

    dependencies = [
        ("lti", "0002_course_contexts"),
        ("courses", "0001_initial"),
    ]

    operations = [migrations.RunPython(courses_for_linked_contexts, migrations.RunPython.noop)]
