import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { APP_NAME, IsAppName, TIMER_ID, toBoolean, toTimerId } from '../../common/validators';
import { PageQuery } from '../../timers/dto/list-timers.query';
import { Envelope } from '../../common/envelope';

export class AppNameDto {
  @ApiProperty({ example: 'billing', pattern: APP_NAME.source })
  @IsAppName()
  app!: string;
}

export class IssueTokenDto extends AppNameDto {
  @ApiPropertyOptional({ example: 'ci deploy', maxLength: 128 })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  @Matches(/^[^\x00-\x1f\x7f]*$/, { message: 'label must not contain control characters' })
  label?: string;
}

export class RevokeTokenDto extends AppNameDto {
  @ApiProperty({ example: 7, description: 'id returned when the token was issued' })
  @Transform(toTimerId)
  @IsString({ message: 'tokenId must be a positive integer' })
  @Matches(TIMER_ID, { message: 'tokenId must be a positive integer' })
  tokenId!: string;
}

/** Longest overlap of a signing secret rotation: 30 days. */
export const SECRET_OVERLAP_MAX_SECONDS = 30 * 86_400;
/** Overlap of a rotation that names none: a day for receivers to take the new secret. */
export const SECRET_OVERLAP_DEFAULT_SECONDS = 86_400;

export class RotateSecretDto extends AppNameDto {
  @ApiPropertyOptional({
    example: 86_400,
    minimum: 0,
    maximum: SECRET_OVERLAP_MAX_SECONDS,
    description:
      'Seconds the replaced secret keeps signing beside the new one (`webhook-signature` carries both), so receivers can switch without ' +
      `refusing deliveries. Default ${SECRET_OVERLAP_DEFAULT_SECONDS}; 0 replaces it at once.`,
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(SECRET_OVERLAP_MAX_SECONDS)
  overlapSeconds?: number;
}

export class AppView {
  @ApiProperty({ example: 'billing' })
  app!: string;
}

export class AppResponse extends Envelope {
  @ApiProperty({ type: AppView })
  data!: AppView;
}

export class IssuedToken {
  @ApiProperty({ example: 7 })
  id!: number;

  @ApiProperty({ description: 'the bearer token; shown only this once (only its hash is stored)' })
  token!: string;
}

export class TokenResponse extends Envelope {
  @ApiProperty({ type: IssuedToken })
  data!: IssuedToken;
}

export class SecretView {
  @ApiProperty({
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    description: 'new signing secret (`whsec_<base64>`, Standard Webhooks; also the X-Timer-Signature key); shown only this once',
  })
  secret!: string;

  @ApiProperty({ type: Number, nullable: true, example: 1_767_225_600_000, description: 'until when (epoch ms) the replaced secret still signs; null when none does' })
  previousSecretValidUntil!: number | null;
}

export class SecretResponse extends Envelope {
  @ApiProperty({ type: SecretView })
  data!: SecretView;
}

export class PauseView {
  @ApiProperty({ example: 'billing' })
  app!: string;

  @ApiProperty({ description: 'false when the app already was in the state asked for (nothing was written)' })
  changed!: boolean;

  @ApiProperty({ description: 'whether the app is paused now' })
  paused!: boolean;

  @ApiProperty({ type: Number, nullable: true, example: 1767225600000, description: 'start of the latest pause (epoch ms); fires from then on are not delivered' })
  pausedAt!: number | null;

  @ApiProperty({
    type: Number,
    nullable: true,
    example: 1767229202000,
    description: 'end of the latest pause (epoch ms): the resume answer + 2 s; fires before it are recorded missed, fires from it on are delivered. Null while paused',
  })
  resumedAt!: number | null;

  @ApiProperty({ example: 3, description: 'resume: pending fires of the paused interval this request recorded missed (reason `paused`); the reconciler records the earlier ones during the pause. 0 for pause' })
  missedFires!: number;
}

export class PauseResponse extends Envelope {
  @ApiProperty({ type: PauseView })
  data!: PauseView;
}

/** `GET /api/app/v1/apps`: every app, by name (admin). */
export class ListAppsQuery extends PageQuery {}

/** `GET /api/app/v1/tokens`: an app's tokens, newest first. */
export class ListTokensQuery {
  @ApiProperty({ example: 'billing', pattern: APP_NAME.source })
  @IsAppName()
  app!: string;

  @ApiPropertyOptional({ type: Boolean, default: false, description: 'Also list revoked tokens (with `revokedAt`); left out by default.' })
  @IsOptional()
  @Transform(toBoolean)
  @IsBoolean({ message: 'includeRevoked must be true or false' })
  includeRevoked?: boolean;
}

export class AppSummaryView {
  @ApiProperty({ example: 'billing' })
  app!: string;

  @ApiProperty({ example: 1767225600000, description: 'epoch ms' })
  createdAt!: number;

  @ApiProperty({ example: 12, description: 'live (not deleted) timers, enabled or not' })
  liveTimers!: number;

  @ApiProperty({ description: 'paused (`POST /api/app/v1/pause`) and not resumed' })
  paused!: boolean;

  @ApiProperty({ example: 2, description: 'tokens not revoked' })
  liveTokens!: number;
}

export class AppsResponse extends Envelope {
  @ApiProperty({ type: [AppSummaryView] })
  data!: AppSummaryView[];

  @ApiProperty({ example: 1 })
  total!: number;
}

/** A token as listed: never the token itself or its hash (only the hash is stored). */
export class TokenView {
  @ApiProperty({ example: 7, description: 'the id to revoke it by' })
  id!: number;

  @ApiProperty({ type: String, nullable: true, example: 'ci deploy', description: 'the label given at issue' })
  label!: string | null;

  @ApiProperty({ example: 1767225600000, description: 'issued at (epoch ms)' })
  createdAt!: number;

  @ApiProperty({ type: Number, nullable: true, example: null, description: 'revoked at (epoch ms); null while it is live' })
  revokedAt!: number | null;
}

export class TokensResponse extends Envelope {
  @ApiProperty({ type: [TokenView] })
  data!: TokenView[];

  @ApiProperty({ example: 1 })
  total!: number;
}
